package redact_test

import (
	"strings"
	"testing"

	"backupd/app/backup"
	"backupd/app/devsim"
)

// simConfig is a simulated router's configuration of about size bytes.
func simConfig(b *testing.B, platform string, size int) string {
	b.Helper()
	d, err := devsim.NewDevice(devsim.Options{Platform: platform, Hostname: "bench-" + platform, Username: "u", Password: "p", ConfigSize: size})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	text, ok := d.Show(d.Personality().ConfigCommands[0])
	if !ok {
		b.Fatal("no configuration")
	}
	return text
}

// BenchmarkMask masks a 48 KiB configuration; the yardstick is what
// change detection already does to every stored version, its noise
// filter's Strip, on the same text in the same run.
//
//	go test ./app/redact -run '^$' -bench Mask -count 5
func BenchmarkMask(b *testing.B) {
	for _, platform := range []string{"cisco_ios", "juniper_junos", "fortinet"} {
		text := simConfig(b, platform, 48<<10)
		b.Run(platform+"/mask", func(b *testing.B) {
			m := keyring(&testing.T{}, 1).Device(1, platform)
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if out := m.Text(text); !strings.Contains(out, "<secret:") && platform == "cisco_ios" {
					b.Fatal("nothing masked")
				}
			}
		})
		b.Run(platform+"/noise-strip", func(b *testing.B) {
			f, err := backup.NewNoiseFilter(platform, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				f.Strip(text)
			}
		})
	}
}
