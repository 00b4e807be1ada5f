package driver

// MaskGroup is the name of the subexpression a noise rule uses to mask
// part of a line instead of ignoring the whole line. A rule without such a
// group ignores every line it matches; a rule with one replaces, in every
// match, only the text of that group, so the rest of the line still
// counts. FortiOS shows why both are needed: `set psksecret ENC <blob>`
// prints a new blob on every export, but the setting itself (its name,
// and whether it is there at all) is configuration.
const MaskGroup = "mask"

// Noise rules are anchored and as narrow as the device's own wording, so
// that a configuration statement can never match: comments in general are
// configuration too (a banner, a description); only the lines the device
// writes about itself are noise. Platforms without rules (PAN-OS, VyOS,
// Linux) print nothing of the kind: their output changes only when the
// configuration does.
