package syslog

// Ruckus FastIron (ICX): the dynamic log buffer of an ICX switch in a
// public support dump shows "0d02h29m35s:I:running-config was changed by
// from ssh client 10.0.0.113" (the user name empty: a key login) next to
// "0d02h25m04s:I:VLAN: Id 20 added by  from ssh session". The <PRI> and
// the BSD header are added the way the switch sends them; the text after
// it is the buffer's.
func init() {
	samples = append(samples,
		sample{"ICX log buffer (public support dump)", "<14>Jan  6 10:29:35 ICX7150-48P running-config was changed by  from ssh client 10.0.0.113", "fastiron-running-config-changed"},
		sample{"ICX log buffer (public support dump)", "<14>Jan  6 10:25:04 ICX7150-48P VLAN: Id 20 added by  from ssh session", ""},
		sample{"ICX log buffer (public support dump)", "<14>Jan  6 10:19:21 ICX7150-48P Security: SSH login by public key from src IP 10.0.0.113, src MAC 68f7.288d.ec40 to USER EXEC mode", ""},
	)
}
