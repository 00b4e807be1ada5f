package admin

import "backupd/app/insync"

// A sync report's reasons and problems are insync.Why codes with their
// values (names, keys, slugs, field names as the source gives them): the
// command line prints them in English, this page says them in its
// language, each code by its message key with the values in place.

// insyncWhyKeys are the message keys of the insync.Why codes: every code
// of insync.WhyCodes has one, its English the command line's very words.
var insyncWhyKeys = map[string]string{
	insync.WhyAddressMetadata:     keyInsyncWhyAddressMetadata,
	insync.WhyAddressZone:         keyInsyncWhyAddressZone,
	insync.WhyApplyDisabled:       keyInsyncWhyApplyDisabled,
	insync.WhyApplyChanged:        keyInsyncWhyApplyChanged,
	insync.WhyApplyGone:           keyInsyncWhyApplyGone,
	insync.WhyApplyNotSyncDisable: keyInsyncWhyApplyNotSyncDisable,
	insync.WhyApplyNotOwned:       keyInsyncWhyApplyNotOwned,
	insync.WhyBackInSource:        keyInsyncWhyBackInSource,
	insync.WhyClaimed:             keyInsyncWhyClaimed,
	insync.WhyDisabledByPerson:    keyInsyncWhyDisabledByPerson,
	insync.WhyDuplicateName:       keyInsyncWhyDuplicateName,
	insync.WhyEntryNoName:         keyInsyncWhyEntryNoName,
	insync.WhyEntryNotObject:      keyInsyncWhyEntryNotObject,
	insync.WhyGone:                keyInsyncWhyGone,
	insync.WhyGoneDisabled:        keyInsyncWhyGoneDisabled,
	insync.WhyGoneDisabledByHand:  keyInsyncWhyGoneDisabledByHand,
	insync.WhyGroupControl:        keyInsyncWhyGroupControl,
	insync.WhyGroupElsewhere:      keyInsyncWhyGroupElsewhere,
	insync.WhyGroupNotUTF8:        keyInsyncWhyGroupNotUTF8,
	insync.WhyGroupSpaces:         keyInsyncWhyGroupSpaces,
	insync.WhyGroupTooDeep:        keyInsyncWhyGroupTooDeep,
	insync.WhyGroupTooLong:        keyInsyncWhyGroupTooLong,
	insync.WhyHandMadeNoClaim:     keyInsyncWhyHandMadeNoClaim,
	insync.WhyHostNotName:         keyInsyncWhyHostNotName,
	insync.WhyHostOddNumber:       keyInsyncWhyHostOddNumber,
	insync.WhyKeyReused:           keyInsyncWhyKeyReused,
	insync.WhyKeyTooLong:          keyInsyncWhyKeyTooLong,
	insync.WhyLeftAsIs:            keyInsyncWhyLeftAsIs,
	insync.WhyMappingUnknown:      keyInsyncWhyMappingUnknown,
	insync.WhyNameControl:         keyInsyncWhyNameControl,
	insync.WhyNameNotUTF8:         keyInsyncWhyNameNotUTF8,
	insync.WhyNameSpaces:          keyInsyncWhyNameSpaces,
	insync.WhyNameTakenByHand:     keyInsyncWhyNameTakenByHand,
	insync.WhyNameTakenOtherSrc:   keyInsyncWhyNameTakenOtherSrc,
	insync.WhyNameTakenThisSrc:    keyInsyncWhyNameTakenThisSrc,
	insync.WhyNameTooLong:         keyInsyncWhyNameTooLong,
	insync.WhyNetBoxBadIP:         keyInsyncWhyNetBoxBadIP,
	insync.WhyNetBoxNoIP:          keyInsyncWhyNetBoxNoIP,
	insync.WhyNoHost:              keyInsyncWhyNoHost,
	insync.WhyNoName:              keyInsyncWhyNoName,
	insync.WhyNoPlatform:          keyInsyncWhyNoPlatform,
	insync.WhyNotSingleValue:      keyInsyncWhyNotSingleValue,
	insync.WhyTemplateOtherPlat:   keyInsyncWhyTemplateOtherPlat,
	insync.WhyLoginMethod:         keyInsyncWhyLoginMethod,
	insync.WhyNotAPort:            keyInsyncWhyNotAPort,
	insync.WhyUnchanged:           keyInsyncWhyUnchanged,
	insync.WhyUnknownCredential:   keyInsyncWhyUnknownCredential,
	insync.WhyUnknownPlatform:     keyInsyncWhyUnknownPlatform,
	insync.WhyUnknownTemplate:     keyInsyncWhyUnknownTemplate,
}

// inventoryWhy is one part of a line's reason: a message key and its
// values, or, for a code the page has no words for, the English Text.
type inventoryWhy struct {
	Key  string
	Args []any
	Text string
}

// whyMessages are w's parts as the page says them (nil for none).
func whyMessages(w insync.Why) []inventoryWhy {
	if w.IsZero() {
		return nil
	}
	var out []inventoryWhy
	for _, p := range w.Parts() {
		key, ok := insyncWhyKeys[p.Code]
		if !ok {
			out = append(out, inventoryWhy{Text: p.String()})
			continue
		}
		args := make([]any, len(p.Args))
		for i, a := range p.Args {
			args[i] = a
		}
		out = append(out, inventoryWhy{Key: key, Args: args})
	}
	return out
}
