package driver_test

import (
	"slices"
	"strings"
	"testing"

	"backupd/app/collect/driver"
)

// foreignName is a device type of another tool: the platform it imports
// as, or none yet ("") with what the tool means by it.
type foreignName struct {
	name, platform, what string
}

// rancidTypes is every device type of RANCID 3.13's etc/rancid.types.base
// (tag v3_13 of RANCID's repository), with the platform its router.db
// lines import as. A type maps only when its login and configuration
// command are those of the platform: RANCID's aliases ("ios-xr" is
// "cisco-xr") and its per-release types (ios-xr7, dnos9, junos-evo,
// bigip13, sros-md) map with the type they name.
var rancidTypes = []foreignName{
	{"a10", "a10_acos", ""},
	{"agm", "", "Cisco Anomaly Guard Module"},
	{"alteon", "", "Alteon WebOS switch"},
	{"arbor", "", "Arbor Networks appliance"},
	{"arcos", "", "Arrcus ArcOS router"},
	{"arista", "arista_eos", ""},
	{"avocent", "", "Avocent console server"},
	{"axis", "", "Axis switch"},
	{"baynet", "", "Bay Networks router"},
	{"bigip", "f5_tmos", ""},
	{"bigip13", "f5_tmos", ""},
	{"brocade", "", "Brocade switch, a login type without a collection script"},
	{"cat5", "", "Cisco Catalyst 4000/5000 with CatOS"},
	{"ciena-ws", "", "Ciena Waveserver"},
	{"cisco", "cisco_ios", ""},
	{"cisco-exr", "cisco_xr", ""},
	{"cisco-nx", "cisco_nxos", ""},
	{"cisco-sb", "cisco_smb", ""},
	{"cisco-wlc4", "cisco_wlc", ""},
	{"cisco-wlc5", "cisco_wlc", ""},
	{"cisco-wlc8", "cisco_wlc", ""},
	{"cisco-xr", "cisco_xr", ""},
	{"cisco-xr7", "cisco_xr", ""},
	{"css", "", "Cisco Content Services Switch"},
	{"dell", "dell_powerconnect", ""},
	{"dnos10", "dell_os10", ""},
	{"dnos9", "dell_os9", ""},
	{"edgemax", "ubiquiti_edgeswitch", ""},
	{"edgerouter", "ubiquiti_edgeos", ""},
	{"edgerouterbird", "ubiquiti_edgeos", ""},
	{"enterasys", "", "Enterasys NAS, collected as riverstone"},
	{"erx", "", "Juniper E-series edge router"},
	{"extreme", "extreme_exos", ""},
	{"ezt3", "", "ADC-Kentrox EZ-T3 mux"},
	{"f5", "f5_tmos", ""},
	{"force10", "dell_os9", ""},
	{"fortigate", "fortinet", ""},
	{"fortigate-full", "fortinet", ""},
	{"foundry", "ruckus_fastiron", ""},
	{"frr", "frr", ""},
	{"fss2", "", "Fujitsu FSS2 / 1FINITY"},
	{"fxos", "", "Cisco Firepower FXOS chassis"},
	{"hitachi", "", "Hitachi router"},
	{"hp", "hp_procurve", ""},
	{"ios", "cisco_ios", ""},
	{"ios-exr", "cisco_xr", ""},
	{"ios-nx", "cisco_nxos", ""},
	{"ios-sb", "cisco_smb", ""},
	{"ios-xr", "cisco_xr", ""},
	{"ios-xr7", "cisco_xr", ""},
	{"juniper", "juniper_junos", ""},
	{"juniper-srx", "juniper_junos", ""},
	{"junos", "juniper_junos", ""},
	{"junos-evo", "juniper_junos", ""},
	{"mikrotik", "mikrotik_routeros", ""},
	{"mrtd", "", "host running MRTd"},
	{"mrv", "", "MRV optical device"},
	{"netopia", "", "Netopia router"},
	{"netscaler", "citrix_netscaler", ""},
	{"netscreen", "juniper_screenos", ""},
	{"paloalto", "paloalto_panos", ""},
	{"redback", "", "Redback router"},
	{"riverbed", "", "Riverbed SteelHead"},
	{"riverstone", "", "Riverstone / Cabletron router"},
	{"routeros", "mikrotik_routeros", ""},
	{"smc", "", "SMC switch; for a Dell PowerConnect 35xx write dell_powerconnect"},
	{"sros", "nokia_sros", ""},
	{"sros-md", "nokia_sros", ""},
	{"vrp", "huawei_vrp", ""},
	{"xirrus", "", "Xirrus wireless array"},
	{"zebra", "", "Zebra routing software, collected as frr"},
}

// oxidizedModels is every model of Oxidized (lib/oxidized/model/*.rb of
// ytti/oxidized at 687ed42, August 2026, less model.rb, outputs.rb and
// the mix-ins macros.rb, dslcommands.rb and dslsetup.rb), with the
// platform its router.db lines import as. A model maps only when it
// drives the platform's command line the way the platform does (prompt,
// paging, the configuration command); a model for another product of
// the same vendor stays unmapped.
var oxidizedModels = []foreignName{
	{"acmepacket", "", "Oracle Acme Packet"},
	{"acos", "a10_acos", ""},
	{"acsw", "", "Cisco ACE"},
	{"addpack", "", "AddPack VoIP gateway"},
	{"adtran", "", "Adtran Total Access AOS"},
	{"adva", "", "ADVA"},
	{"aen", "", "Accedian AEN"},
	{"aireos", "cisco_wlc", ""},
	{"airfiber", "", "Ubiquiti airFiber"},
	{"airos", "", "Ubiquiti airOS"},
	{"alteonos", "", "Radware AlteonOS"},
	{"alvarion", "", "Alvarion BreezeACCESS"},
	{"aos", "", "Alcatel-Lucent OmniSwitch AOS 6"},
	{"aos7", "", "Alcatel-Lucent OmniSwitch AOS 7/8"},
	{"aoscx", "aruba_aoscx", ""},
	{"aosw", "aruba_os", ""},
	{"apc_aos", "apc_aos", ""},
	{"apcaos", "apc_aos", ""},
	{"arbos", "", "Arbor Networks ArbOS"},
	{"aricentiss", "", "Supermicro switches with Aricent ISS"},
	{"arubainstant", "aruba_instant", ""},
	{"asa", "cisco_asa", ""},
	{"asternos", "", "Asterfusion AsterNOS"},
	{"asyncos", "", "Cisco AsyncOS"},
	{"audiocodes", "", "AudioCodes"},
	{"audiocodesmp", "", "AudioCodes MediaPack"},
	{"awplus", "alliedtelesis_awplus", ""},
	{"axos", "", "Calix AXOS"},
	{"bdcom", "", "BDCOM switches"},
	{"boss", "", "Avaya/Extreme BOSS on ERS switches"},
	{"br6910", "", "Brocade 6910"},
	{"c4cmts", "", "Arris C4 CMTS"},
	{"cambium", "", "Cambium PMP 450"},
	{"cambiumepmp", "", "Cambium ePMP"},
	{"casa", "", "Casa Systems"},
	{"catos", "", "Cisco CatOS"},
	{"ciscoce", "", "Cisco Catalyst Express"},
	{"cisconga", "", "Cisco NGA"},
	{"ciscosma", "", "Cisco SMA"},
	{"ciscosmb", "cisco_smb", ""},
	{"ciscovpn3k", "", "Cisco VPN 3000"},
	{"cnos", "lenovo_cnos", ""},
	{"comnetms", "", "ComNet switch"},
	{"comtrol", "", "Comtrol RocketLinx"},
	{"comware", "hp_comware", ""},
	{"coriant8600", "", "Coriant 8600"},
	{"coriantgroove", "", "Coriant Groove"},
	{"corianttmos", "", "Coriant 8800 TMOS"},
	{"cumulus", "cumulus_linux", ""},
	{"datacom", "", "DataCom DmSwitch"},
	{"dcnos", "", "SNR / DCN switches"},
	{"defacto", "", "generic Cisco-like device"},
	{"dellx", "dell_powerconnect", ""},
	{"dlink", "", "D-Link"},
	{"dlinknextgen", "", "D-Link with a Cisco-like CLI"},
	{"dnos", "dell_os9", ""},
	{"eatonnetwork", "eaton_network", ""},
	{"eciapollo", "", "ECI Apollo"},
	{"edgecos", "", "Edge-Core and OEM switches"},
	{"edgeos", "ubiquiti_edgeos", ""},
	{"edgeswitch", "ubiquiti_edgeswitch", ""},
	{"efos", "broadcom_efos", ""},
	{"eltex", "", "Eltex"},
	{"enterasys", "", "Enterasys B/C-series"},
	{"enterasys800", "", "Enterasys 800-series"},
	{"enterprise_sonic", "", "Enterprise SONiC"},
	{"eos", "arista_eos", ""},
	{"exalink", "", "Cisco ExaLink Fusion"},
	{"f5os", "", "F5OS on rSeries and VELOS"},
	{"fabricos", "", "Brocade Fabric OS"},
	{"fastiron", "ruckus_fastiron", ""},
	{"fiberdriver", "", "MRV FiberDriver"},
	{"firebrick", "", "FireBrick"},
	{"firelinuxos", "cisco_ftd", ""},
	{"firewareos", "watchguard_fireware", ""},
	{"fortigate", "fortinet", ""},
	{"fortios", "fortinet", ""},
	{"fortiwlc", "", "Fortinet FortiWLC"},
	{"fsos", "fs_os", ""},
	{"ftos", "dell_os9", ""},
	{"fujitsupy", "", "Fujitsu PRIMERGY blade switch"},
	{"gaiaos", "checkpoint_gaia", ""},
	{"garderos", "", "Garderos GRS"},
	{"gcombnps", "", "GCOM BNPS, FS S3800"},
	{"grandstream", "", "Grandstream GWN"},
	{"grandstreamht8xx", "", "Grandstream HT8xx"},
	{"h3c", "h3c_comware", ""},
	{"hatteras", "", "Hatteras"},
	{"hios", "", "Hirschmann HiOS"},
	{"hirschmann", "", "Hirschmann Classic"},
	{"hpebladesystem", "", "HPE BladeSystem Onboard Administrator"},
	{"hpemsa", "", "HPE MSA storage"},
	{"hpmsm", "", "HP MSM wireless controller"},
	{"ibos", "", "Waystream iBOS"},
	{"icotera", "", "Icotera"},
	{"ingate", "", "Ingate SIParator"},
	{"ios", "cisco_ios", ""},
	{"iosxe", "cisco_xe", ""},
	{"iosxr", "cisco_xr", ""},
	{"ipos", "", "Ericsson IPOS"},
	{"ironware", "ruckus_fastiron", ""},
	{"isam", "", "Nokia ISAM"},
	{"ivanti", "", "Ivanti Connect Secure"},
	{"junos", "juniper_junos", ""},
	{"kornfeldos", "", "Yadro KornfeldOS"},
	{"lancom", "", "LANCOM LCOS"},
	{"lenovonos", "", "Lenovo Network OS, ENOS"},
	{"linksyssrw", "", "Linksys SRW"},
	{"linuxgeneric", "linux", ""},
	{"masteros", "", "MRV MasterOS"},
	{"mimosab11", "", "Mimosa B11"},
	{"ml66", "", "Ericsson MINI-LINK 6600"},
	{"mlnxos", "mellanox_onyx", ""},
	{"mtrlrfs", "", "Motorola / Extreme WiNG RFS"},
	{"ndms", "", "Zyxel / Keenetic NDMS"},
	{"necix", "", "NEC IX"},
	{"netgear", "netgear_prosafe", ""},
	{"netonix", "", "Netonix WISP switch"},
	{"netscaler", "citrix_netscaler", ""},
	{"nodegrid", "", "ZPE Nodegrid"},
	{"nos", "", "Brocade NOS on VDX"},
	{"nsxconfig", "", "VMware NSX Edge configuration"},
	{"nsxdfw", "", "VMware NSX distributed firewall"},
	{"nsxfirewall", "", "VMware NSX Edge firewall"},
	{"nxos", "cisco_nxos", ""},
	{"ocnos", "", "IP Infusion OcNOS"},
	{"onefinity", "", "Fujitsu 1FINITY"},
	{"oneos", "", "OneAccess OneOS"},
	{"openbsd", "", "OpenBSD"},
	{"opengear", "opengear", ""},
	{"openwrt", "", "OpenWrt"},
	{"opnsense", "opnsense", ""},
	{"os10", "dell_os10", ""},
	{"os6", "dell_os6", ""},
	{"panos", "paloalto_panos", ""},
	{"panos_api", "", "Palo Alto PAN-OS through its XML API"},
	{"perle", "perle_iolan", ""},
	{"pfsense", "pfsense", ""},
	{"planet", "", "PLANET switches"},
	{"powerconnect", "dell_powerconnect", ""},
	{"procurve", "hp_procurve", ""},
	{"purityos", "", "Pure Storage Purity"},
	{"qtech", "", "QTECH switches"},
	{"quantaos", "broadcom_efos", ""},
	{"raisecom", "", "Raisecom"},
	{"rgos", "ruijie_os", ""},
	{"riverbed", "", "Riverbed SteelHead"},
	{"routeros", "mikrotik_routeros", ""},
	{"saos", "ciena_saos", ""},
	{"saos10", "ciena_saos", ""},
	{"screenos", "juniper_screenos", ""},
	{"sgos", "", "Symantec Blue Coat ProxySG"},
	{"siklu", "", "Siklu EtherHaul"},
	{"siklumhtg", "", "Siklu MultiHaul TG"},
	{"sixwind", "", "6WIND VSR"},
	{"slxos", "", "Extreme/Brocade SLX-OS"},
	{"smartax", "huawei_smartax", ""},
	{"smartbyte", "", "SmartByte switches"},
	{"smartcs", "", "Seiko SmartCS"},
	{"sonicos", "sonicwall_sonicos", ""},
	{"speedtouch", "", "Thomson SpeedTouch"},
	{"sros", "nokia_sros", ""},
	{"srosmd", "nokia_sros", ""},
	{"stoneos", "", "Hillstone StoneOS"},
	{"supermicro", "", "Supermicro switches, Oxidized's old name for edgecos"},
	{"swos", "", "MikroTik SwOS"},
	{"tdre", "", "OneAccess TDRE"},
	{"telco", "", "Telco Systems T-Marc"},
	{"tmos", "f5_tmos", ""},
	{"tnsr", "netgate_tnsr", ""},
	{"tplink", "tplink_jetstream", ""},
	{"trango", "", "Trango Systems"},
	{"truenas", "", "TrueNAS"},
	{"ucs", "", "Cisco UCS"},
	{"unifiap", "", "Ubiquiti UniFi AP"},
	{"uplinkolt", "", "Uplink OLT"},
	{"viptela", "", "Cisco Viptela SD-WAN"},
	{"voltaire", "", "Mellanox Voltaire"},
	{"voss", "extreme_voss", ""},
	{"vrp", "huawei_vrp", ""},
	{"vsololt", "", "VSOL GPON OLT"},
	{"vyatta", "vyos", ""},
	{"vyos", "vyos", ""},
	{"weos", "", "Westell WEOS"},
	{"xos", "extreme_exos", ""},
	{"yamaha", "", "Yamaha NVR/RTX"},
	{"zhoneolt", "", "Zhone OLT"},
	{"zteolt", "", "ZTE C300/C320 OLT"},
	{"zy1308", "", "Zyxel 1308"},
	{"zynos", "", "Zyxel ZyNOS"},
	{"zynosadsl", "", "Zyxel ZyNOS ADSL"},
	{"zynoscli", "", "Zyxel ZyNOS DSLAM CLI"},
	{"zynosgs", "", "Zyxel ZyNOS GS"},
	{"zynosmgs", "", "Zyxel ZyNOS MGS"},
}

// TestForeignNames checks that every RANCID type and Oxidized model
// imports as the platform the tables above give, and that a name listed
// as not supported yet resolves to nothing (so that the list the
// documentation prints stays true when an alias is added), and that no
// name is claimed by two platforms.
func TestForeignNames(t *testing.T) {
	for _, tc := range []struct {
		tool  string
		names []foreignName
		count int
	}{
		{"RANCID type", rancidTypes, 71},
		{"Oxidized model", oxidizedModels, 194},
	} {
		if len(tc.names) != tc.count {
			t.Errorf("%d %ss listed, want %d", len(tc.names), tc.tool, tc.count)
		}
		if !slices.IsSortedFunc(tc.names, func(a, b foreignName) int { return strings.Compare(a.name, b.name) }) {
			t.Errorf("the %ss are not in order", tc.tool)
		}
		for i, n := range tc.names {
			if i > 0 && tc.names[i-1].name == n.name {
				t.Errorf("%s %q listed twice", tc.tool, n.name)
			}
			if (n.platform == "") == (n.what == "") {
				t.Errorf("%s %q: give a platform, or what it is when none", tc.tool, n.name)
			}
			if owners := claimedBy(n.name); len(owners) > 1 {
				t.Errorf("%s %q is claimed by %v", tc.tool, n.name, owners)
			}
			got, ok := driver.Resolve(n.name)
			switch {
			case n.platform == "" && ok:
				t.Errorf("%s %q resolves to %s but is listed as not supported: list its platform", tc.tool, n.name, got.ID)
			case n.platform != "" && (!ok || got.ID != n.platform):
				t.Errorf("%s %q resolves to %q (%v), want %s", tc.tool, n.name, got.ID, ok, n.platform)
			}
			// Files are written in any case ("IOS", "Cisco-NX").
			if n.platform != "" {
				if got, _ := driver.Resolve(" " + strings.ToUpper(n.name) + " "); got.ID != n.platform {
					t.Errorf("%s %q in upper case resolves to %q", tc.tool, n.name, got.ID)
				}
			}
		}
	}
}

// claimedBy lists the built-in platforms whose ID or alias is name.
func claimedBy(name string) []string {
	var ids []string
	for _, p := range driver.Builtins() {
		if p.ID == name || slices.Contains(p.Aliases, name) {
			ids = append(ids, p.ID)
		}
	}
	return ids
}
