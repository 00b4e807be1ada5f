package devsim

import (
	"fmt"
	"net"
	"time"
)

// changeLogs are the messages a device of each platform logs when its
// configuration changes, as that platform words them (the texts the
// syslog listener's built-in patterns recognise; %s is the login name).
// A platform without one logs nothing the listener knows.
var changeLogs = map[string]string{
	"cisco_ios":         "%%SYS-5-CONFIG_I: Configured from console by %s on vty0 (127.0.0.1)",
	"cisco_xe":          "%%SYS-5-CONFIG_I: Configured from console by %s on vty0 (127.0.0.1)",
	"arista_eos":        "Cli: %%SYS-5-CONFIG_I: Configured from console by %s on vty3 (127.0.0.1)",
	"ruijie_os":         "%%SYS-5-CONFIG_I: Configured from console by %s on vty0 (127.0.0.1)",
	"cisco_nxos":        "%%VSHD-5-VSHD_SYSLOG_CONFIG_I: Configured from vty by %s on 127.0.0.1@pts/0",
	"cisco_xr":          "%%MGBL-CONFIG-6-DB_COMMIT : Configuration committed by user '%s'. Use 'show configuration commit changes 1000000001' to view the changes.",
	"juniper_junos":     "mgd[4410]: UI_COMMIT: User '%s' requested 'commit' operation (comment: none)",
	"huawei_vrp":        "%%%%01CFG/4/CFG_CHANGE(s)[0]:Configuration was changed by %s.",
	"huawei_vrpv8":      "%%%%01CONFIGURATION/6/CFG_FILE_CHANGE(l):Configuration file was changed. (TerUser=\"%s\", SrcAddr=127.0.0.1)",
	"h3c_comware":       "%%%%10CFGMAN/5/CFGMAN_CFGCHANGED: -EventIndex=[1-CommandSource=2-ConfigSource=4-ConfigDestination=2; Configuration is changed by %s.]",
	"hp_procurve":       "mgr:  Running config change by %s",
	"aruba_aoscx":       "type=USYS_CONFIG msg=audit : msg='rec=ACCT_CMD op=stop user=%s service=shell data='interface 1/1/1' res=success'",
	"mikrotik_routeros": "system,info address changed by %s",
	"cisco_asa":         "%%ASA-5-111008: User '%s' executed the 'interface GigabitEthernet0/1' command.",
	"fortinet":          `logid="0100044547" type="event" subtype="system" level="information" vd="root" logdesc="Object attribute configured" user="%s" ui="ssh(127.0.0.1)" action="Edit" cfgpath="system.interface"`,
	"paloalto_panos":    "1,2026/11/25 14:00:00,012801000000,CONFIG,0,2562,2026/11/25 14:00:00,127.0.0.1,,commit,%s,Web,Submitted,,",
}

// ChangeLog is the syslog message (RFC 5424, the device's hostname in
// its header) the device sends when its configuration changes, and
// false when its platform logs no change the listener recognises.
func (d *Device) ChangeLog(at time.Time) (string, bool) {
	text, ok := changeLogs[d.p.Platform]
	if !ok {
		return "", false
	}
	user := d.opts.Username
	if user == "" {
		user = "admin"
	}
	// <189>: facility local7, severity notice, as network gear logs.
	return fmt.Sprintf("<189>1 %s %s - - - - %s", at.UTC().Format("2006-01-02T15:04:05.000Z"), d.opts.Hostname,
		fmt.Sprintf(text, user)), true
}

// LogChange sends the device's ChangeLog to a syslog receiver at addr
// (host:port) in one UDP datagram, as a device whose `logging host` is
// addr does; false when its platform logs nothing the listener knows.
func (d *Device) LogChange(addr string) (bool, error) {
	msg, ok := d.ChangeLog(time.Now())
	if !ok {
		return false, nil
	}
	c, err := net.DialTimeout("udp", addr, 5*time.Second)
	if err != nil {
		return false, err
	}
	defer c.Close()
	if err := c.SetWriteDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return false, err
	}
	if _, err := c.Write([]byte(msg)); err != nil {
		return false, err
	}
	return true, nil
}
