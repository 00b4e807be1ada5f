package lock

import (
	"database/sql"
	"os"
	"testing"

	"backupd/db/engine"
)

// The lock connection's keepalives are in force on the server's side:
// what bounds how long PostgreSQL keeps the locks of a node cut off
// (LockServerBound).
func TestLockSessionServerKeepalives(t *testing.T) {
	server := os.Getenv("BACKUPD_TEST_POSTGRES")
	if server == "" {
		t.Skip("needs PostgreSQL: set BACKUPD_TEST_POSTGRES")
	}
	u, err := engine.PGURL(server, sessionParams)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sql.Open("postgres", u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := map[string]string{"tcp_keepalives_idle": "5", "tcp_keepalives_interval": "2", "tcp_keepalives_count": "3",
		"tcp_user_timeout": "10000", "application_name": "backupd-lock"}
	for k, v := range want {
		var got string
		if err := c.QueryRow("SHOW " + k).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != v {
			t.Errorf("%s = %q on the lock connection, want %q", k, got, v)
		}
	}
}
