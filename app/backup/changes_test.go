package backup_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"backupd/app/backup"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// histStore opens a migrated store in a temporary directory.
func histStore(t testing.TB) *db.Store {
	t.Helper()
	return dbtest.Open(t)
}

// histDevice creates a device of platform, in group when not nil.
func histDevice(t testing.TB, s *db.Store, name, platform string, group *int64) db.Device {
	t.Helper()
	d, err := s.CreateDevice(context.Background(), db.Device{Name: name, Host: "192.0.2.1", Port: 22,
		Platform: platform, LoginMethod: "ssh", Encoding: "utf-8", Enabled: true, GroupID: group})
	if err != nil {
		t.Fatalf("CreateDevice %s: %v", name, err)
	}
	return d
}

// histVersion records a successful backup of text started at started.
func histVersion(t testing.TB, s *db.Store, deviceID int64, started time.Time, text string) db.Backup {
	t.Helper()
	ctx := context.Background()
	hash, err := s.PutSnapshot(ctx, text)
	if err != nil {
		t.Fatal(err)
	}
	finished := started.Add(2 * time.Second)
	size := int64(len(text))
	b := db.Backup{ID: uuid.NewString(), DeviceID: deviceID, StartedAt: started, FinishedAt: &finished,
		Success: true, SnapshotHash: &hash, Trigger: queue.TriggerSchedule, Bytes: &size}
	if err := s.InsertBackup(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b
}

// histFailure records a failed attempt.
func histFailure(t testing.TB, s *db.Store, deviceID int64, started time.Time, msg string) db.Backup {
	t.Helper()
	finished := started.Add(time.Second)
	b := db.Backup{ID: uuid.NewString(), DeviceID: deviceID, StartedAt: started, FinishedAt: &finished,
		ErrorMessage: &msg, Trigger: queue.TriggerSchedule}
	if err := s.InsertBackup(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNormalise(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"\n\n \t\n", ""},
		{"a", "a\n"},
		{"a\n", "a\n"},
		{"a\n\n\n", "a\n"},
		{"\r\n\r\nhostname r1  \r\n!\t\r\n\r\n interface x \r\n\r\n", "hostname r1\n!\n\n interface x\n"},
		{"a\rb", "a\nb\n"},
		{"  leading indent kept\n", "  leading indent kept\n"},
		{"a\n\n\nb\n", "a\n\n\nb\n"},
		{"secret 5 $1$abc$xyz \n", "secret 5 $1$abc$xyz\n"},
	} {
		if got := backup.Normalise(c.in); got != c.want {
			t.Errorf("Normalise(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := backup.Normalise(c.want); got != c.want {
			t.Errorf("Normalise is not idempotent on %q: %q", c.want, got)
		}
	}
}

const iosBefore = `Building configuration...

Current configuration : 1423 bytes
!
! Last configuration change at 11:54:34 UTC Thu Aug 29 2024 by admin
! NVRAM config last updated at 11:55:02 UTC Thu Aug 29 2024 by admin
!
version 15.2
hostname access-1
!
ntp clock-period 17179823
ntp server 192.0.2.10
!
interface GigabitEthernet0/1
 description uplink
 switchport mode trunk
!
end
`

// iosAfter is iosBefore a day later, nothing changed but the noise.
var iosAfter = strings.NewReplacer(
	"1423 bytes", "1424 bytes",
	"11:54:34 UTC Thu Aug 29 2024 by admin", "02:00:03 UTC Fri Aug 30 2024 by backup",
	"! NVRAM config last updated at 11:55:02 UTC Thu Aug 29 2024 by admin", "! No configuration change since last restart",
	"17179823", "17179871",
).Replace(iosBefore)

// TestChangedIgnoresNoise stores two captures of an unchanged device and
// a changed one, reads them back, and compares them as the engine does.
func TestChangedIgnoresNoise(t *testing.T) {
	ctx := context.Background()
	s := histStore(t)
	f, err := backup.NewNoiseFilter("cisco_ios", nil)
	if err != nil {
		t.Fatal(err)
	}
	read := func(text string) string {
		hash, err := s.PutSnapshot(ctx, backup.Normalise(text))
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.SnapshotText(ctx, hash)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	prev, same := read(iosBefore), read(iosAfter)
	if prev == same {
		t.Fatal("the captures must differ byte for byte")
	}
	if backup.Changed(prev, same, f) {
		t.Error("a capture differing only in timestamps, size and clock-period is reported changed")
	}
	if !backup.Changed("", prev, f) {
		t.Error("the first version is not reported changed")
	}
	if backup.Changed(prev, prev, f) {
		t.Error("identical text reported changed")
	}
	changed := read(strings.Replace(iosAfter, " description uplink", " description uplink to core-2", 1))
	if !backup.Changed(prev, changed, f) {
		t.Error("a changed description is not reported changed")
	}
	removed := read(strings.Replace(iosAfter, "ntp server 192.0.2.10\n", "", 1))
	if !backup.Changed(prev, removed, f) {
		t.Error("a removed line is not reported changed")
	}
	// Without the platform's rules the noise counts.
	plain, err := backup.NewNoiseFilter("linux", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !backup.Changed(prev, same, plain) {
		t.Error("linux has no noise rules, yet the IOS noise was ignored")
	}
	// Trailing blanks and line endings are not changes.
	if backup.Changed(prev, strings.ReplaceAll(prev, "\n", " \r\n"), f) {
		t.Error("line endings and trailing blanks reported as a change")
	}
}

func TestNoiseFilterStripAndIsNoise(t *testing.T) {
	f, err := backup.NewNoiseFilter("fortinet", nil)
	if err != nil {
		t.Fatal(err)
	}
	text := "#conf_file_ver=2841660000000000\nconfig vpn ipsec phase1-interface\n    edit \"b1\"\n        set psksecret ENC QmFja3VwZDEyMw==\n    next\nend\n"
	got := f.Strip(text)
	if strings.Contains(got, "conf_file_ver") || strings.Contains(got, "QmFja3VwZDEyMw==") {
		t.Errorf("Strip kept noise: %q", got)
	}
	for _, keep := range []string{"config vpn ipsec phase1-interface\n", "        set psksecret ENC ", "    next\nend\n"} {
		if !strings.Contains(got, keep) {
			t.Errorf("Strip lost %q: %q", keep, got)
		}
	}
	for line, want := range map[string]bool{
		"#conf_file_ver=2841660000000000":      true,
		"        set psksecret ENC QmFja3VwZA": true,
		"        set password ENC SH2abcdef":   false,
		"config vpn ipsec phase1-interface":    false,
		"":                                     false,
	} {
		if got := f.IsNoise(line); got != want {
			t.Errorf("IsNoise(%q) = %v, want %v", line, got, want)
		}
	}
	var none *backup.NoiseFilter
	if none.Strip(text) != text || none.IsNoise("#conf_file_ver=1") {
		t.Error("a nil filter must strip nothing")
	}
}

// TestNoiseFilterUserRules: a user rule applies to its platform only, or
// to all when it names none; a mask group masks part of the line.
func TestNoiseFilterUserRules(t *testing.T) {
	rules := []db.NoiseRule{
		{Pattern: `^snmp-server engineID local `, Platform: "cisco_ios", Description: "regenerated on reload"},
		{Pattern: `^# generated by (?P<mask>\S+)$`},
		{Pattern: `checksum (?P<mask>[0-9a-f]+)`, Platform: "juniper_junos"},
	}
	ios, err := backup.NewNoiseFilter("cisco_ios", rules)
	if err != nil {
		t.Fatal(err)
	}
	junos, err := backup.NewNoiseFilter("juniper_junos", rules)
	if err != nil {
		t.Fatal(err)
	}
	prev := "hostname r1\nsnmp-server engineID local 800000090300AABBCCDDEEFF\n# generated by alice\nchecksum 0a0b\n"
	cur := "hostname r1\nsnmp-server engineID local 800000090300112233445566\n# generated by bob\nchecksum ffff\n"
	if !backup.Changed(prev, cur, junos) {
		t.Error("the cisco_ios rule was applied to a junos device")
	}
	// On ios the engine ID and the generator are noise, the checksum is not.
	if !backup.Changed(prev, cur, ios) {
		t.Error("the juniper_junos rule was applied to an ios device")
	}
	curIOS := strings.Replace(cur, "checksum ffff", "checksum 0a0b", 1)
	if backup.Changed(prev, curIOS, ios) {
		t.Error("user rules for cisco_ios and for all platforms were not applied")
	}
	// A masked part is noise, the rest of the line is not.
	if !backup.Changed(prev, strings.Replace(curIOS, "# generated by bob", "# created by bob", 1), ios) {
		t.Error("a mask rule hid the whole line")
	}
	curJunos := strings.NewReplacer("checksum ffff", "checksum 1234", "800000090300112233445566", "800000090300AABBCCDDEEFF",
		"# generated by bob", "# generated by carol").Replace(cur)
	if backup.Changed(prev, curJunos, junos) {
		t.Error("junos: the checksum and generator rules were not applied")
	}
}

func TestNoiseRulesInvalid(t *testing.T) {
	ctx := context.Background()
	s := histStore(t)
	good := []db.NoiseRule{{Pattern: `^! Generated `, Description: "tool header"}}
	if err := backup.SaveNoiseRules(ctx, s, good); err != nil {
		t.Fatalf("SaveNoiseRules: %v", err)
	}
	for _, c := range []struct {
		name  string
		rules []db.NoiseRule
		index int
		field string
		says  string
	}{
		{"syntax", []db.NoiseRule{good[0], {Pattern: `^interface (Gi`}}, 1, "pattern", "not a valid regular expression"},
		{"empty", []db.NoiseRule{{Pattern: "  "}}, 0, "pattern", "empty"},
		{"matches all", []db.NoiseRule{good[0], good[0], {Pattern: `.*`}}, 2, "pattern", "matches any line"},
		{"matches all, masked", []db.NoiseRule{{Pattern: `(?P<mask>.+)`}}, 0, "pattern", "matches any line"},
		{"platform", []db.NoiseRule{{Pattern: `^x`, Platform: "cisco_nope"}}, 0, "platform", "not a known platform"},
		{"too long", []db.NoiseRule{{Pattern: strings.Repeat("a", backup.MaxNoisePatternSize+1)}}, 0, "pattern", "longer than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := backup.ValidateNoiseRules(c.rules)
			var rerr *backup.NoiseRuleError
			if !errors.As(err, &rerr) {
				t.Fatalf("ValidateNoiseRules = %v, want a *NoiseRuleError", err)
			}
			if rerr.Index != c.index || rerr.Field != c.field || !strings.Contains(rerr.Message, c.says) {
				t.Errorf("error %+v, want index %d field %s saying %q", rerr, c.index, c.field, c.says)
			}
			if err := backup.SaveNoiseRules(ctx, s, c.rules); err == nil {
				t.Error("SaveNoiseRules stored invalid rules")
			}
			stored, err := s.NoiseRules(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(stored) != 1 || stored[0] != good[0] {
				t.Errorf("stored rules changed to %+v", stored)
			}
		})
	}
	// NewNoiseFilter names the bad rule; a bad rule of another platform
	// does not stop this one.
	bad := []db.NoiseRule{good[0], {Pattern: `([`, Platform: "cisco_ios"}}
	_, err := backup.NewNoiseFilter("cisco_ios", bad)
	if err == nil || !strings.Contains(err.Error(), "rules[1].pattern") || !strings.Contains(err.Error(), `"(["`) {
		t.Errorf("NewNoiseFilter error %v does not name rule 1 and its pattern", err)
	}
	if _, err := backup.NewNoiseFilter("arista_eos", bad); err != nil {
		t.Errorf("a cisco_ios rule broke arista_eos: %v", err)
	}
	if err := backup.ValidateNoiseRules(make([]db.NoiseRule, backup.MaxNoiseRules+1)); err == nil {
		t.Error("too many rules accepted")
	}
	if err := backup.SaveNoiseRules(ctx, s, nil); err != nil {
		t.Fatal(err)
	}
	if stored, err := s.NoiseRules(ctx); err != nil || len(stored) != 0 {
		t.Errorf("after saving no rules: %v, %v", stored, err)
	}
}
