package platforms_test

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"backupd/app/collect/driver"
	"backupd/app/platforms"
	"backupd/db"
	"backupd/internal/dbtest"
)

// valid is a definition equivalent to the built-in Cisco IOS dialogue.
func valid() platforms.Definition {
	return platforms.Definition{
		Schema: platforms.Schema, ID: "custom_acme_os", Name: "Acme OS", Vendor: "Acme",
		Prompt:          `^[\w.-]{1,60}[>#]$`,
		Pager:           `(?i)--\s?more\s?--$`,
		PagingOff:       []string{"terminal length 0"},
		Enable:          &platforms.Enable{Command: "enable", Privileged: `#$`, Failed: `(?i)denied|bad secret`},
		PreLogin:        []platforms.Answer{{Match: `(?i)press any key`, Send: `\n`}},
		CommandError:    `^% Invalid`,
		DefaultCommands: []string{"show running-config"},
		Strip:           []string{`^Building configuration\.\.\.$`},
		Noise:           []string{`^! Last configuration change at `},
	}
}

func TestValidDefinitionConverts(t *testing.T) {
	p, err := valid().Platform()
	if err != nil {
		t.Fatal(err)
	}
	if !p.Custom || p.ID != "custom_acme_os" || p.DefaultCommands != "show running-config" ||
		p.Dialogue.Enable != "enable" || p.Dialogue.PasswordPrompt == nil || len(p.Dialogue.PreLogin) != 1 ||
		p.Dialogue.PreLogin[0].Send != "\n" || !p.Dialogue.Prompt.MatchString("R1#") {
		t.Fatalf("converted %+v", p)
	}
	// The JSON round trip keeps it.
	d, err := platforms.Parse(platforms.Marshal(valid()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Platform(); err != nil {
		t.Fatal(err)
	}
}

func TestDefinitionValidation(t *testing.T) {
	long := strings.Repeat("a", platforms.MaxPattern+1)
	many := make([]string, platforms.MaxRules+1)
	for i := range many {
		many[i] = "^x$"
	}
	cmds := make([]string, platforms.MaxCommands+1)
	for i := range cmds {
		cmds[i] = "show x"
	}
	cases := []struct {
		name    string
		change  func(*platforms.Definition)
		field   string
		problem platforms.Problem
	}{
		{"bad id", func(d *platforms.Definition) { d.ID = "acme" }, "id", platforms.BadID},
		{"id upper case", func(d *platforms.Definition) { d.ID = "custom_Acme" }, "id", platforms.BadID},
		{"id too long", func(d *platforms.Definition) { d.ID = "custom_" + strings.Repeat("a", 41) }, "id", platforms.BadID},
		{"built-in id", func(d *platforms.Definition) { d.ID = "cisco_ios" }, "id", platforms.BuiltinID},
		{"no id", func(d *platforms.Definition) { d.ID = "" }, "id", platforms.Required},
		{"schema", func(d *platforms.Definition) { d.Schema = "v0" }, "schema", platforms.BadSchema},
		{"no name", func(d *platforms.Definition) { d.Name = " " }, "name", platforms.Required},
		{"bad prompt", func(d *platforms.Definition) { d.Prompt = `^[\w+$` }, "prompt", platforms.BadPattern},
		{"backreference (not RE2)", func(d *platforms.Definition) { d.Prompt = `^(a)\1#$` }, "prompt", platforms.BadPattern},
		{"no prompt", func(d *platforms.Definition) { d.Prompt = "" }, "prompt", platforms.Required},
		{"prompt matches empty", func(d *platforms.Definition) { d.Prompt = `.*` }, "prompt", platforms.MatchesEmpty},
		{"prompt matches empty 2", func(d *platforms.Definition) { d.Prompt = `^[>#]?$` }, "prompt", platforms.MatchesEmpty},
		{"pager matches empty", func(d *platforms.Definition) { d.Pager = `x*` }, "pager", platforms.MatchesEmpty},
		{"command error matches empty", func(d *platforms.Definition) { d.CommandError = `^` }, "command_error", platforms.MatchesEmpty},
		{"pattern too long", func(d *platforms.Definition) { d.Pager = long }, "pager", platforms.TooLong},
		{"too many noise rules", func(d *platforms.Definition) { d.Noise = many }, "noise", platforms.TooMany},
		{"bad noise rule", func(d *platforms.Definition) { d.Noise = []string{"ok", "(("} }, "noise[1]", platforms.BadPattern},
		{"bad strip rule", func(d *platforms.Definition) { d.Strip = []string{"a{2,1}"} }, "strip[0]", platforms.BadPattern},
		{"too many commands", func(d *platforms.Definition) { d.DefaultCommands = cmds }, "default_commands", platforms.TooMany},
		{"no commands", func(d *platforms.Definition) { d.DefaultCommands = []string{" "} }, "default_commands", platforms.Required},
		{"command with control", func(d *platforms.Definition) { d.DefaultCommands = []string{"show\x1b[2J"} }, "default_commands[0]", platforms.NotPrintable},
		{"send too long", func(d *platforms.Definition) { d.PreLogin[0].Send = strings.Repeat("y", 65) }, "pre_login[0].send", platforms.TooLong},
		{"send not printable", func(d *platforms.Definition) { d.PreLogin[0].Send = "\x03" }, "pre_login[0].send", platforms.NotPrintable},
		{"pre-login matches empty", func(d *platforms.Definition) { d.PreLogin[0].Match = `a?` }, "pre_login[0].match", platforms.MatchesEmpty},
		{"transport", func(d *platforms.Definition) { d.Transports = []string{"ssh", "rsh"} }, "transports[1]", platforms.UnknownTransport},
		{"enable failed bad", func(d *platforms.Definition) { d.Enable.Failed = "(" }, "enable.failed", platforms.BadPattern},
		{"name control", func(d *platforms.Definition) { d.Name = "a\x00b" }, "name", platforms.NotPrintable},
		{"whole document too large", func(d *platforms.Definition) {
			d.Notes = strings.Repeat("n", platforms.MaxNotes)
			for i := 0; i < 40; i++ {
				d.Noise = append(d.Noise, strings.Repeat("b", 400))
			}
		}, "document", platforms.TooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := valid()
			c.change(&d)
			_, err := d.Platform()
			var errs platforms.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("err = %v, want Errors", err)
			}
			for _, e := range errs {
				if e.Field == c.field && e.Problem == c.problem {
					if e.Message == "" {
						t.Fatal("no message")
					}
					return
				}
			}
			t.Fatalf("errors %v, want %s %s", errs, c.field, c.problem)
		})
	}
}

func TestParseRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"not json":      `schema: x`,
		"unknown field": `{"schema":"backupd.platform/v1","id":"custom_a","promt":"x"}`,
		"trailing":      `{"schema":"backupd.platform/v1"} {}`,
		"too large":     `{"notes":"` + strings.Repeat("x", platforms.MaxDocument) + `"}`,
	} {
		if _, err := platforms.Parse([]byte(doc)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// Every built-in platform exports to a definition that imports again
// (under its custom_ ID): the export is a usable starting point.
func TestBuiltinsExportAndImport(t *testing.T) {
	for _, b := range driver.Builtins() {
		d, err := platforms.Parse(platforms.Marshal(platforms.FromPlatform(b)))
		if err != nil {
			t.Fatalf("%s: %v", b.ID, err)
		}
		p, err := d.Platform()
		if err != nil {
			t.Errorf("%s: export does not import: %v", b.ID, err)
			continue
		}
		if p.DefaultCommands != b.DefaultCommands || p.Dialogue.Prompt.String() != b.Dialogue.Prompt.String() {
			t.Errorf("%s: export changed the definition", b.ID)
		}
		if !reflect.DeepEqual(p.Secrets, b.Secrets) {
			t.Errorf("%s: export changed the secret rules", b.ID)
		}
	}
}

func TestLoadStore(t *testing.T) {
	ctx := context.Background()
	store := dbtest.Open(t)
	t.Cleanup(func() { driver.SetCustom(nil) })

	if _, err := platforms.Save(ctx, store, valid(), true); err != nil {
		t.Fatal(err)
	}
	if p, ok := driver.Lookup("custom_acme_os"); !ok || !p.Custom {
		t.Fatal("saved platform not in the registry")
	}
	if _, err := platforms.Save(ctx, store, valid(), true); !errors.Is(err, db.ErrNameExists) {
		t.Fatalf("second create: %v", err)
	}
	// A stored definition that no longer loads is left out and named,
	// the others are installed.
	if _, err := store.CreateCustomPlatform(ctx, "custom_broken", `{"schema":"backupd.platform/v1","id":"custom_broken","prompt":"("}`); err != nil {
		t.Fatal(err)
	}
	driver.SetCustom(nil)
	err := platforms.LoadStore(ctx, store)
	if err == nil || !strings.Contains(err.Error(), "custom_broken") {
		t.Fatalf("LoadStore: %v", err)
	}
	if _, ok := driver.Lookup("custom_acme_os"); !ok {
		t.Fatal("the good platform was not installed")
	}
	if _, ok := driver.Lookup("custom_broken"); ok {
		t.Fatal("the broken platform was installed")
	}
	if err := platforms.Delete(ctx, store, "custom_acme_os"); err != nil {
		t.Fatal(err)
	}
	if _, ok := driver.Lookup("custom_acme_os"); ok {
		t.Fatal("deleted platform still in the registry")
	}
}

// The example on the platforms page (docs/platforms.md) is a definition
// that loads.
func TestDocsExample(t *testing.T) {
	page, err := os.ReadFile("../../docs/platforms.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(page), "## Custom platforms")
	if !ok {
		t.Fatal("docs/platforms.md has no Custom platforms section")
	}
	_, block, _ := strings.Cut(after, "```json\n")
	block, _, _ = strings.Cut(block, "```")
	d, err := platforms.Parse([]byte(block))
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.Platform()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Secrets) != 3 || p.Secrets[2].Begin == "" {
		t.Fatalf("the example's secret rules convert to %+v", p.Secrets)
	}
	if p.Dialogue.PreLogin[0].Send != "\n" || !p.Dialogue.Prompt.MatchString("core-1#") {
		t.Fatalf("the example of docs/platforms.md converts to %+v", p.Dialogue)
	}
	if r := p.Restore; r.Method != "ios_configure_replace" || r.File == "" || r.Timer.Max == 0 || len(r.Drop) != 2 ||
		!r.ApplyError.MatchString("% Invalid input detected at '^' marker.") {
		t.Fatalf("the example's restore converts to %+v", r)
	}
}

// A definition's secret rules mask what they name, and bad ones are
// refused field by field with the reason.
func TestDefinitionSecrets(t *testing.T) {
	d := valid()
	d.Secrets = []platforms.Secret{
		{Name: "SNMP community", Match: `^snmp community (?P<secret>\S+)`},
		{Name: "license", Begin: `^-----BEGIN LICENSE-----$`, End: `^-----END LICENSE-----$`},
	}
	p, err := d.Platform()
	if err != nil {
		t.Fatal(err)
	}
	p, err = driver.Prepare(p)
	if err != nil {
		t.Fatal(err)
	}
	text := "snmp community Pr1vate ro\n-----BEGIN LICENSE-----\nAAAA-BBBB\n-----END LICENSE-----\nhostname x\n"
	got := p.SecretSet().Mask(text, func(string) string { return "<secret:000000>" }, nil)
	want := "snmp community <secret:000000> ro\n-----BEGIN LICENSE-----\n<secret:000000>\n-----END LICENSE-----\nhostname x\n"
	if got != want {
		t.Fatalf("masked:\n%s\nwant:\n%s", got, want)
	}
	for _, tc := range []struct {
		rule  platforms.Secret
		field string
		p     platforms.Problem
	}{
		{platforms.Secret{Name: "x", Match: `^password (\S+)`}, "secrets[0].match", platforms.NoSecretGroup},
		{platforms.Secret{Name: "x", Match: `^password (?P<secret>\S+`}, "secrets[0].match", platforms.BadPattern},
		{platforms.Secret{Name: "", Match: `^password (?P<secret>\S+)`}, "secrets[0].name", platforms.Required},
		{platforms.Secret{Name: "x", Match: `a(?P<secret>b)`, Begin: "c", End: "d"}, "secrets[0]", platforms.SecretForm},
		{platforms.Secret{Name: "x", Begin: "c"}, "secrets[0]", platforms.SecretForm},
		{platforms.Secret{Name: "x", Begin: "x*", End: "y"}, "secrets[0].begin", platforms.MatchesEmpty},
	} {
		d := valid()
		d.Secrets = []platforms.Secret{tc.rule}
		_, err := d.Platform()
		var errs platforms.Errors
		if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Field != tc.field || errs[0].Problem != tc.p {
			t.Errorf("%+v: %v, want %s on %s", tc.rule, err, tc.p, tc.field)
		}
	}
	d = valid()
	for range platforms.MaxRules + 1 {
		d.Secrets = append(d.Secrets, platforms.Secret{Name: "x", Match: `^x (?P<secret>\S+)`})
	}
	if _, err := d.Platform(); err == nil || !strings.Contains(err.Error(), "secrets: more than") {
		t.Errorf("too many rules: %v", err)
	}
}
