package driver

import (
	"strings"
	"testing"
)

// Secret forms of the Juniper, Huawei/H3C/HPE Comware, HPE Aruba,
// Fortinet, Palo Alto, SonicWall, WatchGuard and Check Point platforms,
// and the placeholders their recordings hold.

var junosSecretCases = secretCases{
	Masked: []string{
		// Braces, as `show configuration | display omit` prints them.
		`        encrypted-password "$6${S}${S}"; ## SECRET-DATA`,
		`                encrypted-password "{S}"; ## SECRET-DATA`,
		`                authentication-key "$9${S}"; ## SECRET-DATA`,
		`        hello-authentication-key "$9${S}"; ## SECRET-DATA`,
		`    authentication-key 1 type md5 value "$9${S}"; ## SECRET-DATA`,
		`        secret "$9${S}"; ## SECRET-DATA`,
		`    pre-shared-key ascii-text "$9${S}"; ## SECRET-DATA`,
		`    pre-shared-key hexadecimal "$9${S}"; ## SECRET-DATA`,
		`                simple-password "$9${S}"; ## SECRET-DATA`,
		`                    md5 1 key "$9${S}"; ## SECRET-DATA`,
		`                            privacy-key "$9${S}"; ## SECRET-DATA`,
		`            cak "$9${S}"; ## SECRET-DATA`,
		`                default-chap-secret "$9${S}"; ## SECRET-DATA`,
		`                local-password "$9${S}"; ## SECRET-DATA`,
		`    community {S} {`,
		`    community "{S}" {`,
		`    community {S};`,
		`    trap-group {S} {`,
		`            community {S} {`,
		`set groups SNMP snmp community {S} authorization read-only`,
		`                "scp://backup:{S}@192.0.2.10:/var/backups";`,
		`                "ftp://demouser2@203.0.113.11/backup/" password "$9${S}"; ## SECRET-DATA`,
		`            password "{S}"; ## SECRET-DATA`,
		`        license-key {S}; ## SECRET-DATA`,
		// `display set`.
		`set system root-authentication encrypted-password "$6${S}${S}"`,
		`set system login user netops authentication encrypted-password "{S}"`,
		`set protocols bgp group EBGP neighbor 192.0.2.1 authentication-key "$9${S}"`,
		`set protocols isis interface ge-0/0/0.0 level 2 hello-authentication-key "$9${S}"`,
		`set system ntp authentication-key 2 type sha256 value "$9${S}"`,
		`set system radius-server 192.0.2.5 secret "$9${S}"`,
		`set system tacplus-server 192.0.2.6 secret "$9${S}"`,
		`set security authentication-key-chains key-chain KC key 0 secret "$9${S}"`,
		`set security ike policy IKE-POL pre-shared-key ascii-text "$9${S}"`,
		`set protocols ospf area 0.0.0.0 interface ge-0/0/1.0 authentication simple-password "$9${S}"`,
		`set protocols ospf area 0.0.0.0 interface ge-0/0/1.0 authentication md5 2 key "$9${S}"`,
		`set snmp v3 usm local-engine user netops authentication-sha authentication-key "$9${S}"`,
		`set snmp v3 usm local-engine user netops privacy-aes128 privacy-key "$9${S}"`,
		`set security macsec connectivity-association CA1 pre-shared-key cak "$9${S}"`,
		`set interfaces pp0 unit 0 ppp-options chap default-chap-secret "$9${S}"`,
		`set snmp community {S} authorization read-only`,
		`set snmp community "{S}" clients 192.0.2.0/24`,
		`set snmp routing-instance MGMT community {S}`,
		`set snmp trap-group {S} targets 192.0.2.50`,
		`set system archival configuration archive-sites "sftp://backup:{S}@192.0.2.10/cfg"`,
		`set system archival configuration archive-sites "scp://backup@192.0.2.10/cfg" password "$9${S}"`,
		`set system services dynamic-dns client example.net password "$9${S}"`,
	},
	Plain: []string{
		`    authentication-order [ radius password ];`,
		`        password {`,
		`            format sha512;`,
		`set system login password format sha512`,
		`set system authentication-order password`,
		`                ssh-rsa "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 netops@jump"; ## SECRET-DATA`,
		`                ssh-ed25519 "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOx9 netops@jump"; ## SECRET-DATA`,
		`    authentication-key-chains {`,
		`        key-chain KC {`,
		`            authentication-method pre-shared-keys;`,
		`    description "password reset portal";`,
		`    community BLACKHOLE members 65535:666;`,
		`set policy-options community BLACKHOLE members 65535:666`,
		`                    community BLACKHOLE;`,
		`                community add NO-EXPORT;`,
		`set policy-options policy-statement RTBH term 1 from community BLACKHOLE`,
		`snmp {`,
		`    trap-options {`,
		`            authorization read-only;`,
		`                "ftp://demouser2@203.0.113.11/backup/";`,
		`set system services ssh root-login deny`,
		`        url https://ae1.juniper.net/junos/key_retrieval;`,
	},
}

var screenosSecretCases = secretCases{
	Masked: []string{
		`set admin password "{S}"`,
		`set admin user "ops" password "{S}" privilege "all"`,
		`set user "vpnuser" hash-password "{S}"`,
		`set snmp community "{S}" Read-Write Trap-on traffic version v1`,
		`set snmp host "{S}" 192.0.2.50 255.255.255.255 trap v2c`,
		`set ike gateway "GW1" address 203.0.113.5 Main outgoing-interface "ethernet0/0" preshare "{S}" sec-level standard`,
		`set auth-server "RAD1" radius secret "{S}"`,
		`set auth-server "TAC1" tacacs secret "{S}"`,
		`set ntp server key-id 1 preshare-key "{S}"`,
		`set interface ethernet0/0 protocol ospf authentication md5 "{S}" key-id 1`,
		`set neighbor 192.0.2.1 md5-authentication "{S}"`,
	},
	Plain: []string{
		`set admin name "netscreen"`,
		`set admin password restrict length 8`,
		`set admin auth timeout 10`,
		`set admin auth server "Local"`,
		`set ike p1-proposal "pre-g2-3des-sha" preshare group2 esp 3des sha-1 second 28800`,
		`set auth-server "Local" id 0`,
		`set snmp name "fw01"`,
		`set ntp server "192.0.2.123"`,
	},
}

func init() {
	seed("juniper_junos", junosSecretCases)
	seed("juniper_screenos", screenosSecretCases)
	recorded("junos_srx300_22.4", "very-secret-encrypted-password", "CorrectHorseBattery", "$9$FAKEHASHDATAXXXXXXXXXXXXXXXXXXXX")
}

var vrpSecretCases = secretCases{
	Masked: []string{
		` local-user admin password irreversible-cipher $1c${S}$`,
		` local-user ops password irreversible-cipher $1a${S}"{S}$`,
		` local-user old password cipher %$%${S}%$%$`,
		` local-user old2 password cipher {S}`,
		` local-user lab password simple {S}`,
		`super password level 15 cipher %^%#{S}%^%#`,
		` set authentication password cipher %@%@{S}%@%@`,
		`snmp-agent community read cipher %^%#{S}%^%#`,
		`snmp-agent community write cipher %^%#{S}%^%# mib-view iso-view acl 2000`,
		`snmp-agent community read {S}`,
		`snmp-agent target-host trap address udp-domain 192.0.2.50 params securityname cipher %^%#{S}%^%# v2c`,
		`snmp-agent target-host trap address udp-domain 192.0.2.51 params securityname {S} v2c private-netmanager`,
		`snmp-agent target-host trap address udp-domain 192.0.2.52 params securityname {S}`,
		`snmp-agent usm-user v3 netops authentication-mode sha cipher %^%#{S}%^%# privacy-mode aes128 cipher %^%#{S}%^%#`,
		`snmp-agent usm-user v3 netops authentication-mode sha2-256 cipher %^%#{S}%^%#`,
		`snmp-agent usm-user v3 netops privacy-mode aes256 cipher %^%#{S}%^%#`,
		` radius-server shared-key cipher %^%#{S}"{S}%^%#`,
		` hwtacacs-server shared-key cipher %^%#{S}%^%#`,
		` hwtacacs server shared-key cipher %^%#{S}%^%#`,
		` shared-key cipher %^%#{S}%%^%#`,
		` peer 192.0.2.1 password cipher %^%#{S}%^%#`,
		` peer 192.0.2.2 password simple {S}`,
		` radius-server testuser username test1 password cipher %^%#{S}%^%#`,
		` ospf authentication-mode md5 1 cipher %^%#{S}%^%#`,
		` ospf authentication-mode simple cipher {S}`,
		`  authentication-mode md5 1 plain {S}`,
		` isis authentication-mode md5 cipher %^%#{S}%^%#`,
		` area-authentication-mode md5 plain {S}`,
		` domain-authentication-mode hmac-sha256 key-id 1 cipher {S}`,
		`ntp-service authentication-keyid 1 authentication-mode hmac-sha256 cipher %^%#{S}%^%#`,
		` vrrp vrid 1 authentication-mode simple plain {S}`,
		`  key-string cipher %^%#{S}%^%#`,
		` pre-shared-key cipher %^%#{S}%^%#`,
		` pre-shared-key simple {S}`,
		`  security wpa2 psk pass-phrase %^%#{S}%^%# aes`,
		// Wrapped at the terminal's width: before, and after the mark.
		`  security wpa-wpa2 psk pass-phrase %^%#{S}`,
		`{S}%^%# aes`,
		` pin verify auto cipher %^%#{S}%^%#`,
		` vrrp vrid 1 authentication-mode md5 %^%#{S}%^%#`,
		` wep key 0 wep-40 pass-phrase %^%#{S}%^%#`,
		` local-user admin password irreversible-cipher %@%#{S}%@%#`,
		` local-user admin password irreversible-cipher %#%#{S}%#%#`,
	},
	Plain: []string{
		` local-user admin privilege level 15`,
		` local-user admin service-type terminal ssh`,
		`local-aaa-user password policy administrator`,
		` authentication-mode aaa`,
		` authentication-mode password`,
		` ssh server cipher aes256_ctr aes128_ctr`,
		` ssh client cipher aes256_gcm aes128_gcm`,
		`snmp-agent community complexity-check disable`,
		`snmp-agent sys-info version v2c v3`,
		`snmp-agent target-host trap address udp-domain 192.0.2.53 params securityname netops v3 privacy`,
		`snmp-agent usm-user v3 netops group admin`,
		` radius-server authentication 192.0.2.5 1812 weight 80`,
		` authentication-method pre-share`,
		`%^%# aes`,
		` ike peer HQ-01`,
		` description password of the lab`,
		` ssh user admin authentication-type password`,
	},
}

var comwareSecretCases = secretCases{
	Masked: []string{
		` password hash $h$6${S}${S}==`,
		` password cipher $c$3${S}==`,
		` password cipher {S}`,
		` password simple {S}`,
		`local-user admin password cipher $c$3${S}`,
		` super password role network-admin hash $h$6${S}${S}==`,
		` super password level 3 cipher $c$3${S}`,
		` set authentication password hash $h$6${S}${S}==`,
		` snmp-agent community read cipher $c$3${S}==`,
		` snmp-agent community write simple {S}`,
		` snmp-agent community read {S}`,
		` snmp-agent community cipher $c$3${S} user-role network-operator`,
		` snmp-agent target-host trap address udp-domain 192.0.2.50 params securityname {S} v2c`,
		` snmp-agent target-host trap address udp-domain 192.0.2.51 params securityname {S}`,
		` snmp-agent usm-user v3 netops managerpriv cipher authentication-mode sha $c$3${S}= privacy-mode aes128 $c$3${S}`,
		` snmp-agent usm-user v3 netops grp simple authentication-mode sha256 {S} privacy-mode aes256 {S}`,
		` snmp-agent usm-user v3 ro grp cipher authentication-mode md5 $c$3${S}==`,
		` key authentication cipher $c$3${S}=`,
		` key authorization cipher $c$3${S}`,
		` key accounting simple {S}`,
		` primary authentication 192.0.2.5 key cipher $c$3${S}`,
		` secondary accounting 192.0.2.6 1813 key simple {S}`,
		` peer 192.0.2.1 password cipher $c$3${S}=`,
		` peer 192.0.2.2 password simple {S}`,
		` ppp chap password cipher $c$3${S}==`,
		` ppp pap local-user branch1 password simple {S}`,
		` ospf authentication-mode md5 1 cipher $c$3${S}`,
		`  authentication-mode simple plain {S}`,
		` isis authentication-mode md5 cipher $c$3${S}`,
		` ntp-service authentication-keyid 1 authentication-mode md5 cipher $c$3${S}`,
		` vrrp vrid 1 authentication-mode md5 cipher $c$3${S}`,
		`  key-string cipher $c$3${S}`,
		` pre-shared-key address 203.0.113.1 255.255.255.255 key cipher $c$3${S}`,
		` pre-shared-key cipher $c$3${S}`,
		` pre-shared-key hostname peer1 key simple {S}`,
		` preshared-key pass-phrase cipher $c$3${S}`,
		` preshared-key raw-key simple {S}`,
		` login-password cipher $c$3${S}==`,
	},
	Plain: []string{
		`local-user admin class manage`,
		` password-recovery enable`,
		` password-control length 10`,
		` authentication-mode scheme`,
		` authorization-attribute user-role network-admin`,
		` service-type ssh terminal`,
		` ssh2 algorithm cipher aes128-ctr aes256-ctr`,
		` snmp-agent sys-info version v2c v3`,
		` snmp-agent target-host trap address udp-domain 192.0.2.52 params securityname netops v3 privacy`,
		` primary authentication 192.0.2.5 1812`,
		` user-name-format without-domain`,
		` key 1`,
		` authentication-algorithm md5`,
		` authentication-method pre-share`,
		` akm mode psk`,
		` description password reset portal`,
	},
}

var smartaxSecretCases = secretCases{
	Masked: []string{
		` terminal user name buildrun_new_password root *j$3b${S}'{S}"$* 7 0000:00:00:00:00:00 0000:00:00:00:00:00 root 1 first-login-info 0 self-changed-password 1 "-----"`,
		` terminal user name buildrun_new_password noc *~uc$3b${S}$* 0 2000:01:07:21:40:08 2000:01:07:21:42:27 root 2 first-login-info 0 self-changed-password 1 "20"`,
		` terminal user name history_password noc *~uc$1b${S}$*`,
		`snmp-agent community read cipher "%+%##!!!!{S}"!!!!{S}%+%#"`,
		`snmp-agent community write cipher {S}`,
		` radius-server shared-key-cipher %^%#{S}%^%#`,
		` ont add 0 1 password-auth "{S}" always-on omci ont-lineprofile-id 10 ont-srvprofile-id 10 desc "ONT_1"`,
		` ont add 0 2 loid-auth "LOID-0002" checkcode "{S}" always-on omci ont-lineprofile-id 10 ont-srvprofile-id 10`,
	},
	Plain: []string{
		` terminal user-profile name suporte 0 0 00:00:00 00:00:00`,
		` system user password security mode enhance`,
		` system user password security-length 12`,
		` system modify logon password disable`,
		` ssh user "root" authentication-type password`,
		` ssh server cipher aes256_gcm aes128_gcm aes256_ctr aes192_ctr aes128_ctr`,
		` ont add 0 0 sn-auth "485754431D6BF99B" omci ont-lineprofile-id 3107 ont-srvprofile-id 3107 desc "ONT_HUAWEI"`,
		`snmp-agent local-engineid 800007DB03C8A776869746`,
	},
}

func init() {
	seed("huawei_vrp", vrpSecretCases)
	seed("huawei_vrpv8", vrpSecretCases)
	seed("hp_comware", comwareSecretCases)
	seed("h3c_comware", comwareSecretCases)
	seed("huawei_smartax", smartaxSecretCases)
}

var procurveSecretCases = secretCases{
	Masked: []string{
		`password manager user-name "admin" sha1 "{S:5baa61e4c9b93f3f0682250b6cf8331b7ee68fd8}"`,
		`password operator user-name "backup" sha1 "{S:7c4a8d09ca3762af61e59520943dc26494f8941b}"`,
		`password manager user-name "admin" plaintext "{S}"`,
		`password port-access user-name "dot1x" plaintext "{S}"`,
		`aaa authentication local-user "noc" group "Level-15" password sha1 "{S:e5fa44f2b31c1fb553b6021e7360d07d5d91ff5e}"`,
		`snmp-server community "{S}" operator unrestricted`,
		`snmp-server community "{S}" Operator`,
		`snmp-server community {S} manager restricted`,
		`snmp-server host 192.0.2.50 "{S}" Not-INFO`,
		`snmp-server host 192.0.2.51 community "{S}" trap-level critical`,
		`snmpv3 user "v3user" auth sha "{S}" priv aes "{S}"`,
		`snmpv3 user "v3mon" auth md5 "{S}"`,
		`radius-server host 192.0.2.9 key "{S}"`,
		`radius-server host 192.0.2.10 acct-port 1813 key "{S}"`,
		`radius-server key "{S}"`,
		`radius-server host 192.0.2.11 encrypted-key "{S}"`,
		`radius-server encrypted-key "{S}"`,
		`tacacs-server host 192.0.2.12 key "{S}"`,
		`tacacs-server host 192.0.2.13 encrypted-key "{S}"`,
		`tacacs-server key "{S}"`,
		`   ip ospf 10.1.1.1 authentication-key "{S}"`,
		`   ip ospf authentication-key "{S}"`,
		`password manager user-name "manager" sha256 "{S:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08}"`,
		`encrypted-password manager user-name "manager" U2FsdGVkX1{S}=`,
		`encrypted-password operator {S}`,
		`encrypt-credentials pre-shared-key plaintext "{S}"`,
		`sntp authentication key-id 1 authentication-mode md5 key-value "{S}"`,
		`sntp authentication key-id 2 authentication-mode md5 encrypted-key "{S}"`,
		`aaa port-access supplicant 1 identity "supp-user" secret "{S}"`,
		`aaa port-access supplicant 2 identity "supp-user" encrypted-secret "{S}"`,
		`      key-string "{S}"`,
		`      encrypted-key "{S}"`,
		`      mode pre-shared-key ckn 37c9c2c45ddd cak "{S}"`,
		`      mode pre-shared-key ckn 37c9c2c45ddd encrypted-cak "{S}"`,
	},
	Plain: []string{
		`password manager`,
		`password minimum-length 8`,
		`password manager user-name "admin"`,
		`encrypted-password manager user-name "admin"`,
		`key-chain "ospf-auth"`,
		`   key 1`,
		`   macsec`,
		`sntp authentication`,
		`include-credentials`,
		`encrypt-credentials`,
		`snmp-server contact "noc"`,
		`snmp-server enable traps link-change 1`,
		`snmp-server host 192.0.2.52 informs`,
		`radius-server host 192.0.2.9 dyn-authorization`,
		`radius-server dead-time 10`,
		`aaa authentication ssh login radius local`,
		`   name "password reset portal"`,
		`   ip ospf 10.1.1.1 area backbone`,
	},
}

var aoscxSecretCases = secretCases{
	Masked: []string{
		`user admin group administrators password ciphertext AQBapX{S}`,
		`user ops group operators password ciphertext {S}`,
		`snmp-server community {S}`,
		`snmp-server host 192.0.2.31 trap version v2c community {S}`,
		`snmp-server host 192.0.2.32 inform version v2c community {S} port 162 vrf mgmt`,
		`snmpv3 user netops auth sha auth-pass ciphertext {S} priv aes priv-pass ciphertext {S}`,
		`snmpv3 user monitor auth sha auth-pass plaintext {S}`,
		`radius-server host 192.0.2.20 key ciphertext {S} vrf mgmt`,
		`radius-server host 192.0.2.21 key ciphertext {S}`,
		`radius-server key ciphertext {S}`,
		`tacacs-server host 192.0.2.22 key ciphertext {S} vrf mgmt`,
		`tacacs-server key ciphertext {S}`,
		`ntp authentication-key 1 md5 ciphertext {S}`,
		`ntp authentication-key 2 sha1 ciphertext {S} trusted`,
		`    neighbor 192.0.2.1 password ciphertext {S}`,
		`    ip ospf authentication-key ciphertext {S}`,
		`    ip ospf message-digest-key 1 md5 ciphertext {S}`,
		`    ipv6 ospfv3 authentication ipsec spi 256 sha1 ciphertext {S}`,
		`radius dyn-authorization client 192.0.2.40 secret-key ciphertext {S} vrf mgmt`,
	},
	Plain: []string{
		`!export-password: default`,
		`user admin group administrators`,
		`snmp-server vrf mgmt`,
		`snmp-server system-location Rack 12`,
		`snmp-server trap-source interface vlan2 vrf default`,
		`radius-server host 192.0.2.20 vrf mgmt`,
		`aaa authentication login default group radius local`,
		`ssh server vrf mgmt`,
		`    description password reset portal`,
		`    ip ospf authentication message-digest`,
	},
}

var aosSecretCases = secretCases{
	Masked: []string{
		`enable secret "{S}"`,
		`mgmt-user admin root {S:5a3c9e7f1b2d4c6e8a0b1c2d3e4f5a6b7c8d9e0f} `,
		`mgmt-user ops read-only {S:9a8b7c6d5e4f3a2b1c0d}`,
		`mgmt-user oxidized root {S:********************} node /`,
		`snmp-server community "{S}"`,
		`snmp-server community {S}`,
		`snmp-server host 192.0.2.5 version 2c {S} udp-port 162`,
		`snmp-server host 192.0.2.6 version 1 "{S}"`,
		`snmp-server user "v3user" auth-prot sha "{S}" priv-prot AES "{S}"`,
		`snmp-server user "v3mon" auth-prot md5 "{S}"`,
		`key "{S}"`,
		`   key "{S}" `,
		`admin-passwd "{S}"`,
		`crypto-local isakmp key "{S}" address 0.0.0.0 netmask 0.0.0.0`,
		`ike authentication pre-share {S}`,
		`pre-shared-key "{S}"`,
		`masterip 192.0.2.2 ipsec {S} interface vlan 1`,
		`localip 0.0.0.0 ipsec {S}`,
		`peer-ip-address 192.0.2.3 ipsec {S}`,
		`authentication {S}`,
		`   vrrp-passphrase "{S}"`,
		`ap-console-password "{S}"`,
		`bkup-passwords "{S}"`,
		`   usb-passwd "{S}"`,
		`   pppoe-passwd "{S}"`,
		`wpa-passphrase "{S}"`,
		`   wepkey1 {S}`,
		`mobility-manager 192.0.2.30 user amp-user {S}`,
		`ip ospf message-digest-key 1 md5 {S}`,
		`ip ospf authentication-key {S}`,
		`ntp authentication-key 1 md5 "{S}"`,
	},
	Plain: []string{
		`authentication pre-share`,
		`authentication rsa-sig`,
		`mgmt-user localauth-disable`,
		`mgmt-user ssh-pubkey client-cert ops-cert ops root`,
		`snmp-server enable trap`,
		`masterip 192.0.2.2 ipsec-factory-cert masterid 00:1a:1e:00:00:68`,
		`crypto isakmp policy 20`,
		`opmode wpa2-psk-aes`,
		`essid "PSK-SSID"`,
		`nas-identifier "OXID-IZE01"`,
		`ip ospf authentication message-digest`,
		`aaa authentication-server radius "radius1"`,
	},
}

var instantSecretCases = secretCases{
	Masked: []string{
		`virtual-controller-key {S}`,
		`snmp-server community {S}`,
		`snmp-server host 192.0.2.12 version 2c {S} inform`,
		`snmp-server user v3user sha {S} aes {S}`,
		`hash-mgmt-user oxidized password hash {S}`,
		`hash-mgmt-user rocks password hash {S} usertype read-only`,
		`mgmt-user admin {S}`,
		`mgmt-user guest {S} guest-mgmt`,
		` key {S}`,
		` admin-password {S}`,
		` wpa-passphrase {S}`,
		` wepkey1 {S}`,
		`ams-key {S}`,
		`user guest1 {S} portal`,
		` pppoe-passwd {S}`,
	},
	Plain: []string{
		`hash-mgmt-password`,
		`mgmt-auth-server tacacs1`,
		`allow-new-aps`,
		`Cloud Activation Key     :`,
		`virtual-controller-ip 192.0.2.254`,
		` opmode wpa2-psk-aes`,
		` type employee`,
		` timeout 5`,
		`wlan tacacs-server tacacs1`,
		`dynamic-radius-proxy`,
	},
}

func init() {
	seed("hp_procurve", procurveSecretCases)
	seed("aruba_aoscx", aoscxSecretCases)
	seed("aruba_os", aosSecretCases)
	seed("aruba_instant", instantSecretCases)
	recorded("aoscx_6100-48G_PL.10.10.1090")
	recorded("aosw_Aruba7210_8.10.0.7", "AAAAAAAAAABBBBBBBBBB", "root ********************")
	recorded("arubainstant_IAP515_8.10.0.6_VWLC", "AAAAAAAAAABBBBBBBBBBCCCCCCCCCC")
}

var fortiosSecretCases = secretCases{
	Masked: []string{
		`#private-encryption-key={S}`,
		`        set password ENC SH2{S}`,
		`        set password ENC AK1{S}`,
		`        set passwd ENC {S}`,
		`        set psksecret ENC {S}==`,
		`        set ppk-secret ENC {S}`,
		`        set secret ENC {S}`,
		`        set secondary-secret ENC {S}`,
		`        set key ENC {S}`,
		`        set secondary-key ENC {S}`,
		`        set auth-pwd ENC {S}`,
		`        set priv-pwd ENC {S}`,
		`        set passphrase ENC {S}`,
		`        set sae-password ENC {S}`,
		`            set authentication-key ENC {S}`,
		`                    set key-string ENC {S}`,
		`            set md5-key 1 ENC {S}`,
		`    set proxy-password ENC {S}`,
	},
	Plain: []string{
		`#config-version=FG5H1E-7.4.8-FW-build2795-250523:opmode=0:vdom=1:user=TACACS-USER`,
		`config system admin`,
		`        set accprofile "super_admin"`,
		`        set password-policy "default"`,
		`        set psk-identity "branch"`,
		`        set authentication md5`,
		`        set auth-type psk`,
		`        set security wpa2-only-personal`,
		`        set comments "password reset portal"`,
	},
}

var panosSecretCases = secretCases{
	Masked: []string{
		`        phash $1${S}${S};`,
		`            phash "$5${S}${S}";`,
		`set mgt-config users admin phash $5${S}${S}`,
		`                    snmp-community-string {S};`,
		`set deviceconfig system snmp-setting access-setting version v2c snmp-community-string {S}`,
		`                        community {S};`,
		`                    authpwd -AQ=={S};`,
		`                    privpwd -AQ=={S};`,
		`                        key -AQ=={S};`,
		`              secret -AQ=={S};`,
		`            bind-password -AQ=={S};`,
		`set network ike gateway GW1 authentication pre-shared-key key -AQ=={S}`,
		`            private-key "-AQ=={S}";`,
	},
	Plain: []string{
		`config {`,
		`      pre-shared-key {`,
		`        password-complexity {`,
		`          enabled yes;`,
		`          authentication-profile default;`,
		`        permissions {`,
		`          superuser yes;`,
		`          community {`,
		`            public-key LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t;`,
	},
}

var sonicosSecretCases = secretCases{
	Masked: []string{
		`        password hash 1,{S:5a3c9e7f1b2d4c6e8a0b1c2d3e4f5a6b}`,
		`    password 1,{S}`,
		`    administrator password 1,{S}`,
		`    sslvpn password 1,{S}`,
		`    ftp password 1,{S}`,
		`cli ftp password default 1,{S}`,
		`    passphrase password 1,{S}`,
		`    secret 1,{S}`,
		`    shared-secret 1,{S}`,
		`    bind-password 1,{S}`,
		`    shared-key 1,{S}`,
		`    authentication sha1 1,{S}`,
		`    encryption aes 1,{S}`,
		`    wpa passphrase 1,{S}`,
		`    smtp-pass 1,{S}`,
		`    pop-pass 1,{S}`,
		`    community {S}`,
	},
	Plain: []string{
		`administration`,
		`    admin`,
		`        name admin`,
		`    password complexity`,
		`    comment "password reset portal"`,
		`    authentication-method shared-secret`,
		`    ip-assignment LAN static`,
	},
}

var firewareSecretCases = secretCases{
	Masked: []string{
		`        <password>{S}</password>`,
		`      <auth-password>{S}</auth-password>`,
		`      <passphrase>{S}</passphrase>`,
		`        <pre-shared-key>{S}</pre-shared-key>`,
		`        <shared-secret>{S}</shared-secret>`,
		`        <community>{S}</community>`,
	},
	Plain: []string{
		`      <admin-user>`,
		`      <password-policy>`,
		`      <min-password-length>8</min-password-length>`,
		`      <description>password reset portal</description>`,
		`      <community-list>`,
		`        <password></password>`,
	},
}

var gaiaSecretCases = secretCases{
	Masked: []string{
		`set user admin password-hash $6${S}${S}`,
		`set expert-password-hash $6${S}${S}`,
		`add snmp community {S} read-only`,
		`set snmp community {S} read-write`,
		`add snmp traphost 192.0.2.5 community {S} version v2`,
		`add snmp usm user v3user security-level authPriv auth-pp-protocol SHA1 auth-pass-phrase-hashed {S} privacy-pp-protocol AES privacy-pass-phrase-hashed {S}`,
		`add aaa radius-servers priority 1 host 192.0.2.9 port 1812 prompt-secret 0 secret {S} timeout 3`,
		`add aaa tacacs-servers priority 1 server 192.0.2.10 key {S} timeout 5`,
		`set ospf interface eth1 area backbone authtype cryptographic key 1 algorithm md5 secret {S}`,
		`set bgp external remote-as 65001 peer 192.0.2.1 authtype md5 secret {S}`,
	},
	Plain: []string{
		`set password-controls complexity 2`,
		`set password-controls history-length 10`,
		`add user admin uid 0 homedir /home/admin`,
		`set user admin shell /etc/cli.sh`,
		`set snmp agent on`,
		`set snmp agent-version any`,
		`add aaa radius-servers priority 2 host 192.0.2.9 port 1812 prompt-secret 1 timeout 3`,
		`set ospf interface eth1 area backbone on`,
	},
}

func init() {
	seed("fortinet", fortiosSecretCases)
	seed("paloalto_panos", panosSecretCases)
	seed("sonicwall_sonicos", sonicosSecretCases)
	seed("watchguard_fireware", firewareSecretCases)
	seed("checkpoint_gaia", gaiaSecretCases)
	recorded("fortigate_FortiGate-501E_vdomHAdown")
}

// FortiOS writes a private key as a quoted value over several lines: the
// private key rule every platform has masks the key's lines and keeps the
// "set private-key" line and the closing quote; certificates stay.
func TestFortiOSPrivateKeyMasked(t *testing.T) {
	lines := []string{
		`    edit "certificate"`,
		`        set password ENC AAAAAAAAAABBBBBBBBBBCCCCCCCCCC`,
		`        set comment "Created by generating certificate"`,
		`        set private-key "-----BEGIN ENCRYPTED PRIVATE KEY-----`,
		`MIIFHzBJBgkqhkiG9w0BBQ0wPDAbBgkqhkiG9w0BBQwwDgQIXXENCRYPTEDPRIVATEKEY`,
		`AAAAAAAAAABBBBBBBBBBCCCCCCCCCC==`,
		`-----END ENCRYPTED PRIVATE KEY-----"`,
		`        set certificate "-----BEGIN CERTIFICATE-----`,
		`MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa`,
		`-----END CERTIFICATE-----"`,
		`    next`,
	}
	masked := strings.Split(SecretsOf("fortinet").Mask(strings.Join(lines, "\n"), testMark, nil), "\n")
	for i, want := range lines {
		secret := i == 1 || i == 4 || i == 5
		if got := masked[i]; secret == (got == want) || strings.Contains(got, "AAAAAAAAAABBBBBBBBBBCCCCCCCCCC") {
			t.Errorf("line %d: %q → %q", i+1, want, got)
		}
	}
}
