package admin

import (
	"context"
	"net/http"
	"time"

	"backupd/app/collect/driver"
	"backupd/app/redact"
	"backupd/db"
	"backupd/web/ui/core"
)

// settingsSecrets is the section of where the secrets inside
// configurations are masked (app/redact).
type settingsSecrets struct {
	Masking db.SecretMasking
}

// fillSecrets sets the section from the stored setting.
func (u *handlers) fillSecrets(r *http.Request, s *settingsSecrets) error {
	m, err := u.Store.SecretMaskingSettings(r.Context())
	s.Masking = m
	return err
}

// saveSecrets stores where secrets are masked. Every reader of the
// setting reads it when it masks, so it applies at once; the git mirror
// rewrites its files at its next run (one commit).
func (u *handlers) saveSecrets(w http.ResponseWriter, r *http.Request) error {
	m := db.SecretMasking{
		Git:           r.PostFormValue("git") != "",
		Notifications: r.PostFormValue("notifications") != "",
		Views:         r.PostFormValue("views") != "",
		API:           r.PostFormValue("api") != "",
	}
	if err := u.Store.PutSetting(r.Context(), db.SettingSecretMasking, m); err != nil {
		return err
	}
	u.AuditAs(r, "settings.update", "settings", db.SettingSecretMasking, map[string]any{
		"git": m.Git, "notifications": m.Notifications, "views": m.Views, "api": m.API})
	http.Redirect(w, r, "/settings?done=secrets_saved#secrets", http.StatusSeeOther)
	return nil
}

// secretsReportTimeout bounds the report's reading of the fleet.
const secretsReportTimeout = 30 * time.Second

// secretsReportPage is the data of settings_secrets.html.
type secretsReportPage struct {
	Masking db.SecretMasking
	Report  redact.Report
	// Platforms are the report's, with their names.
	Platforms []secretsReportPlatform
	Seconds   int
}

// secretsReportPlatform is one platform of the report.
type secretsReportPlatform struct {
	redact.PlatformReport
	Name string
}

// secretsReport shows what each platform's rules mask in the fleet's
// latest versions: counts only, never a secret.
func (u *handlers) secretsReport(w http.ResponseWriter, r *http.Request) error {
	m, err := u.Store.SecretMaskingSettings(r.Context())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), secretsReportTimeout)
	defer cancel()
	rep, err := redact.BuildReport(ctx, u.Store)
	if err != nil {
		return err
	}
	p := secretsReportPage{Masking: m, Report: rep, Seconds: int(secretsReportTimeout / time.Second)}
	for _, pr := range rep.Platforms {
		name := pr.Platform
		if pl, ok := driver.Lookup(pr.Platform); ok {
			name = pl.Name
		}
		p.Platforms = append(p.Platforms, secretsReportPlatform{PlatformReport: pr, Name: name})
	}
	return u.Render(w, r, http.StatusOK, "settings_secrets.html", keySecretsReportTitle, p)
}

// pathSecretsReport is the report's page.
const pathSecretsReport = core.PathSettings + "/secrets"
