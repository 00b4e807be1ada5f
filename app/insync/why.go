package insync

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"backupd/db"
)

// Why is the reason of a report line, or the problem of a record, as a
// code and the values it names (names, keys, slugs, field names, as the
// source or the store gives them), so that each interface words it in
// its own language: String is the English the command line and its
// JSON print, the web interface says it with the message key
// "insync.why.<code>", the values in place (%[n]s in either text).
type Why struct {
	Code string
	Args []string
	// More are further reasons said after this one, each after "; ".
	More []Why
}

// The codes of a Why; whyEnglish has the words of each.
const (
	// Reasons of report lines.
	WhyUnchanged           = "unchanged"
	WhyDisabledByPerson    = "disabled_by_person"
	WhyBackInSource        = "back_in_source"
	WhyGone                = "gone"
	WhyGoneDisabled        = "gone_disabled"
	WhyGoneDisabledByHand  = "gone_disabled_by_person"
	WhyHandMadeNoClaim     = "hand_made_no_claim"
	WhyClaimed             = "claimed"
	WhyLeftAsIs            = "left_as_is"
	WhyKeyReused           = "key_reused"
	WhyDuplicateName       = "duplicate_name"
	WhyKeyTooLong          = "key_too_long"
	WhyNameTakenByHand     = "name_taken_by_hand"
	WhyNameTakenOtherSrc   = "name_taken_other_source"
	WhyNameTakenThisSrc    = "name_taken_this_source"
	WhyNoPlatform          = "no_platform"
	WhyMappingUnknown      = "mapping_unknown"
	WhyUnknownPlatform     = "unknown_platform"
	WhyGroupTooDeep        = "group_too_deep"
	WhyGroupElsewhere      = "group_elsewhere"
	WhyUnknownCredential   = "unknown_credential"
	WhyUnknownTemplate     = "unknown_template"
	WhyTemplateOtherPlat   = "template_other_platform"
	WhyLoginMethod         = "login_method"
	WhyNotAPort            = "not_a_port"
	WhyNameSpaces          = "name_spaces"
	WhyNameNotUTF8         = "name_not_utf8"
	WhyNameTooLong         = "name_too_long"
	WhyNameControl         = "name_control"
	WhyGroupSpaces         = "group_spaces"
	WhyGroupNotUTF8        = "group_not_utf8"
	WhyGroupTooLong        = "group_too_long"
	WhyGroupControl        = "group_control"
	WhyApplyGone           = "apply_gone"
	WhyApplyNotOwned       = "apply_not_owned"
	WhyApplyChanged        = "apply_changed"
	WhyApplyDisabled       = "apply_already_disabled"
	WhyApplyNotSyncDisable = "apply_not_disabled_by_sync"

	// Problems of records.
	WhyNoName          = "no_name"
	WhyNoHost          = "no_host"
	WhyAddressZone     = "address_zone"
	WhyAddressMetadata = "address_metadata"
	WhyHostNotName     = "host_not_name"
	WhyHostOddNumber   = "host_odd_number"
	WhyEntryNotObject  = "entry_not_object"
	WhyEntryNoName     = "entry_no_name"
	WhyNotSingleValue  = "not_single_value"
	WhyNetBoxNoIP      = "netbox_no_ip"
	WhyNetBoxBadIP     = "netbox_bad_ip"
)

// whyEnglish words each code in English, its values by position. A value
// in quotes is given without them (cut by quoted): the quotes are the
// text's, so that another language may write its own.
var whyEnglish = map[string]string{
	WhyUnchanged:           "unchanged",
	WhyDisabledByPerson:    "disabled by a person",
	WhyBackInSource:        "back in the source",
	WhyGone:                "gone from the source",
	WhyGoneDisabled:        "gone from the source, disabled already",
	WhyGoneDisabledByHand:  "gone from the source, disabled by a person",
	WhyHandMadeNoClaim:     "a device made by hand has this name, and the source claims no devices: turn claim on to adopt it",
	WhyClaimed:             "made by hand, adopted by the source; its fields follow the source from the next sync",
	WhyLeftAsIs:            "the device is left as it is",
	WhyKeyReused:           "key %[1]s given to several devices in the source",
	WhyDuplicateName:       "duplicate name within the source (keys %[1]s)",
	WhyKeyTooLong:          "key longer than %[1]s bytes",
	WhyNameTakenByHand:     "name taken by a device made by hand (%[1]s)",
	WhyNameTakenOtherSrc:   "name taken by a device of another source (%[1]s)",
	WhyNameTakenThisSrc:    "name taken by another device of this source (key %[1]s)",
	WhyNoPlatform:          "no platform in the source: set the device's platform there, or a default platform for the source",
	WhyMappingUnknown:      "the mapping %[1]s → %[2]s names no backupd platform: fix the mapping",
	WhyUnknownPlatform:     "unknown platform slug %[1]s: add a mapping %[1]s → <platform>",
	WhyGroupTooDeep:        "group path of %[1]s levels, at most %[2]s",
	WhyGroupElsewhere:      `group "%[1]s" is elsewhere in the tree (%[2]s), and group names are unique`,
	WhyUnknownCredential:   `unknown credential "%[1]s": add it under Credentials, or fix the name in the source`,
	WhyUnknownTemplate:     `unknown template "%[1]s": add it under Templates, or fix the name in the source`,
	WhyTemplateOtherPlat:   `template "%[1]s" is for platform %[2]s, the device is %[3]s`,
	WhyLoginMethod:         `login method "%[1]s" (input "%[2]s"): backupd logs in with ssh or telnet`,
	WhyNotAPort:            `%[1]s "%[2]s" is not a port: a number from 1 to 65535`,
	WhyNameSpaces:          `name "%[1]s" starts or ends with spaces`,
	WhyNameNotUTF8:         `name "%[1]s" is not UTF-8 text`,
	WhyNameTooLong:         `name "%[1]s" is longer than 100 characters`,
	WhyNameControl:         `name "%[1]s" holds control characters`,
	WhyGroupSpaces:         `group "%[1]s" starts or ends with spaces`,
	WhyGroupNotUTF8:        `group "%[1]s" is not UTF-8 text`,
	WhyGroupTooLong:        `group "%[1]s" is longer than 100 characters`,
	WhyGroupControl:        `group "%[1]s" holds control characters`,
	WhyApplyGone:           "the device was deleted since the plan",
	WhyApplyNotOwned:       "the device changed hands since the plan",
	WhyApplyChanged:        "a person edited the device since the plan: their edit is kept, the next sync plans again",
	WhyApplyDisabled:       "a person disabled the device since the plan",
	WhyApplyNotSyncDisable: "a person enabled or disabled the device since the plan",

	WhyNoName:          "no name",
	WhyNoHost:          "no address and no DNS name",
	WhyAddressZone:     `address "%[1]s" has a zone: give the address without it`,
	WhyAddressMetadata: `address "%[1]s" is a cloud metadata service, not a device`,
	WhyHostNotName:     `host "%[1]s" is neither an IP address nor a DNS name`,
	WhyHostOddNumber:   `host "%[1]s" is a number but not an IP address written the usual way`,
	WhyEntryNotObject:  "entry %[1]s is not an object",
	WhyEntryNoName:     `entry %[1]s has no name at "%[2]s"`,
	WhyNotSingleValue:  `%[1]s at "%[2]s" is not a single value`,
	WhyNetBoxNoIP:      "no %[1]s in NetBox (assign the device a primary IP, or take the host from its name)",
	WhyNetBoxBadIP:     `NetBox's %[1]s "%[2]s" is not an IP address`,
}

// skipWhy are the store's reasons for not applying a change.
var skipWhy = map[db.InventorySkipReason]string{
	db.InventorySkipGone:              WhyApplyGone,
	db.InventorySkipNotOwned:          WhyApplyNotOwned,
	db.InventorySkipChanged:           WhyApplyChanged,
	db.InventorySkipAlreadyDisabled:   WhyApplyDisabled,
	db.InventorySkipNotDisabledBySync: WhyApplyNotSyncDisable,
}

// The ways a device's or a group's name can be wrong (nameProblem).
const (
	nameSpaces  = "spaces"
	nameNotUTF8 = "not_utf8"
	nameTooLong = "too_long"
	nameControl = "control"
)

// nameWhy and groupWhy word nameProblem's answer for a device's name and
// a group's.
var (
	nameWhy  = map[string]string{nameSpaces: WhyNameSpaces, nameNotUTF8: WhyNameNotUTF8, nameTooLong: WhyNameTooLong, nameControl: WhyNameControl}
	groupWhy = map[string]string{nameSpaces: WhyGroupSpaces, nameNotUTF8: WhyGroupNotUTF8, nameTooLong: WhyGroupTooLong, nameControl: WhyGroupControl}
)

// WhyCodes are every code a Why may hold, sorted: what an interface
// needs words for.
func WhyCodes() []string { return slices.Sorted(maps.Keys(whyEnglish)) }

// why is a Why of code naming args.
func why(code string, args ...string) Why { return Why{Code: code, Args: args} }

// IsZero reports whether w says nothing (no reason, no problem).
func (w Why) IsZero() bool { return w.Code == "" && len(w.More) == 0 }

// Parts are w and its further reasons, in the order said.
func (w Why) Parts() []Why {
	parts := []Why{{Code: w.Code, Args: w.Args}}
	for _, m := range w.More {
		parts = append(parts, m.Parts()...)
	}
	return parts
}

// and is w followed by more.
func (w Why) and(more ...Why) Why {
	w.More = append(slices.Clone(w.More), more...)
	return w
}

// String is w in English, as the command line prints it ("" for none).
func (w Why) String() string {
	if w.IsZero() {
		return ""
	}
	var b strings.Builder
	for i, p := range w.Parts() {
		if i > 0 {
			b.WriteString("; ")
		}
		text, ok := whyEnglish[p.Code]
		if !ok {
			text = p.Code
		}
		if len(p.Args) == 0 {
			b.WriteString(text)
			continue
		}
		args := make([]any, len(p.Args))
		for i, a := range p.Args {
			args[i] = a
		}
		fmt.Fprintf(&b, text, args...)
	}
	return b.String()
}
