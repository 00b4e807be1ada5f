package redact

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"backupd/app/collect/driver"
	"backupd/db"
)

// Report says how the secret rules masked the fleet's latest versions,
// per platform and rule, so that an administrator sees masking work on
// their own configurations. It holds counts only, never a secret.
type Report struct {
	Platforms []PlatformReport
	// Versions is how many latest versions were read; Partial is set
	// when the read stopped early (the context ended).
	Versions int
	Partial  bool
}

// PlatformReport is one platform's part of a Report.
type PlatformReport struct {
	Platform string
	// Devices have a latest version; Masked of them had a secret masked.
	Devices, Masked int
	Rules           []RuleCount
}

// RuleCount is what one rule masked: lines, in how many devices.
type RuleCount struct {
	Name           string
	Lines, Devices int
}

// BuildReport reads every device's latest good version and counts what
// each rule of its platform masks there. It stops when ctx ends, with
// what it counted (Partial).
func BuildReport(ctx context.Context, store *db.Store) (Report, error) {
	var rep Report
	byPlatform := map[string]*PlatformReport{}
	for v, err := range store.SearchVersions(ctx, db.Scope{All: true}, false) {
		if err == nil {
			err = ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			rep.Partial = true
			break
		}
		if err != nil {
			return rep, err
		}
		text, err := v.Text()
		if err != nil {
			return rep, fmt.Errorf("secrets report: version %s of %s: %w", v.BackupID, v.DeviceName, err)
		}
		secrets := driver.SecretsOf(v.Platform)
		p := byPlatform[v.Platform]
		if p == nil {
			p = &PlatformReport{Platform: v.Platform}
			for _, r := range secrets.Rules() {
				p.Rules = append(p.Rules, RuleCount{Name: r.Name})
			}
			byPlatform[v.Platform] = p
		}
		counts := make([]int, len(p.Rules))
		secrets.Mask(text, func(string) string { return "" }, counts)
		p.Devices++
		rep.Versions++
		any := false
		for i, n := range counts {
			if n > 0 {
				p.Rules[i].Lines += n
				p.Rules[i].Devices++
				any = true
			}
		}
		if any {
			p.Masked++
		}
	}
	for _, p := range byPlatform {
		rep.Platforms = append(rep.Platforms, *p)
	}
	sort.Slice(rep.Platforms, func(i, j int) bool { return rep.Platforms[i].Platform < rep.Platforms[j].Platform })
	return rep, nil
}
