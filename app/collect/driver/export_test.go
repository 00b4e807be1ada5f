package driver

// CapturesByPlatform returns, per platform, the recordings of real devices
// TestReplayCaptures (in order) and TestReplayCapturesByCommand (as
// command → reply tables) replay, for the platform table of
// docs/platforms.md in the external tests.
func CapturesByPlatform() map[string][]string {
	out := map[string][]string{}
	for _, c := range captures {
		out[c.platform] = append(out[c.platform], c.file)
	}
	for _, c := range keyedCaptures {
		if !c.otherDevice {
			out[c.platform] = append(out[c.platform], c.file)
		}
	}
	return out
}
