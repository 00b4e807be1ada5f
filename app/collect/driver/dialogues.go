package driver

import "regexp"

// Pieces of command-line dialogue that platforms of several vendors share.
// Patterns are written for what real devices print (config sub-mode
// prompts, HA and context markers, banners that contain '#' or '>'); the
// session trims trailing spaces and resolves escapes, carriage returns and
// backspaces before a line is matched, and only takes a line that merely
// looks like a prompt once the device has fallen silent.
//
// Paging is turned off only with commands that last for the session and
// never touch the configuration; where no such command exists (FortiOS,
// ScreenOS, RouterOS) the pager is answered instead.

var re = regexp.MustCompile

var (
	privileged = re(`#$`)
	// passwordQ is an enable or super password question.
	passwordQ = re(`(?i)password ?:$`)
	// enableFailed is what Cisco-like and VRP/Comware devices print when
	// they refuse to raise privilege.
	enableFailed = re(`(?i)denied|bad secret|bad password|invalid password|incorrect|` +
		`no password set|not set|not configured|failed|error`)
)
