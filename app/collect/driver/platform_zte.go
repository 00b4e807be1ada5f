package driver

// ZTE ZXR10 switches and routers (ZXROS): an IOS-like command line,
// "ZXR10>" raised with `enable` (and its password) to "ZXR10#",
// `terminal length 0`, `show running-config`. No public capture of a real
// session exists; the dialogue follows ZTE's ZXR10 command references.
func init() {
	zx := cisco()
	zx.PagingOff = []string{"terminal length 0"}
	// "%Error 20203: Invalid input detected at '^' marker.", "%Error 20200:
	// Incomplete command." as well as the IOS forms.
	zx.CommandError = re(`^\s*(%\s?Error \d+:|%\s?(Invalid|Incomplete|Ambiguous|Unknown|Unrecognized))`)
	Register(Platform{
		ID: "zte_zxros", Name: "ZTE ZXROS (ZXR10)", Vendor: "ZTE",
		Aliases:         []string{"zxros", "zxr10", "zte"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        zx,
		Notes:           "Needs the enable password where the login lands in user mode (\"ZXR10>\").",
	})
}
