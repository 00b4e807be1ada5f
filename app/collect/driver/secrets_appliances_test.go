package driver

import (
	"regexp"
	"strings"
	"testing"
)

// Secret forms of the routers, firewalls, Linux hosts, console servers,
// power cards and load balancers of the "appliances" group (RouterOS,
// VyOS and EdgeOS, TNSR, pfSense and OPNsense, Linux and Cumulus,
// Opengear, Perle, APC, Eaton, F5, NetScaler, A10, Nokia SR OS, Ciena
// SAOS), and the placeholders their recordings hold.

func init() {
	seed("mikrotik_routeros", secretCases{
		Masked: []string{
			"add name=branch1 password={S} profile=default-encryption service=l2tp",
			"add name=vpnuser password=\"{S}\" service=sstp",
			"add connect-to=vpn.example.net name=sstp-out password={S} user=branch",
			"    password={S} user=branch",
			"add authentication-types=wpa2-psk mode=dynamic-keys name=prof1 supplicant-identity=MikroTik wpa2-pre-shared-key={S}",
			"add authentication-types=wpa-psk,wpa2-psk mode=dynamic-keys name=prof2 wpa-pre-shared-key={S} wpa2-pre-shared-key={S}",
			"add mac-address=00:11:22:33:44:55 private-pre-shared-key={S}",
			"add authentication-types=wpa2-psk,wpa3-psk name=sec1 passphrase=\"{S}\"",
			"add mode=static-keys-required name=wep static-key-0={S} static-algo-0=40bit-wep",
			"add eap-methods=peap mschapv2-password={S} mschapv2-username=wifi name=eap",
			"add address=10.0.0.9 secret={S} service=login",
			"add peer=peer1 secret=\"{S}\"",
			"add local-address=198.51.100.1 name=eoip1 remote-address=203.0.113.1 tunnel-id=1 ipsec-secret={S}",
			"set enabled=yes ipsec-secret={S} use-ipsec=yes",
			"set enabled=yes secrets={S}",
			"add listen-port=13231 mtu=1420 name=wg1 private-key=\"{S}\"",
			"add allowed-address=10.10.0.2/32 interface=wg1 preshared-key=\"{S}\" public-key=\"bP2m3kQy7Yd9oU1rW4tX6zA8cE0gI2kM4oQ6sU8wY0a=\"",
			"add local.role=ebgp name=peer1 remote.address=192.0.2.1/32 .as=65001 tcp-md5-key={S}",
			"add area=backbone-v2 auth=md5 auth-id=1 auth-key={S} interfaces=ether1",
			"add authentication=md5 authentication-key={S} interface=ether2",
			"set [ find default=yes ] name={S}",
			"set [ find default=yes ] addresses=10.0.0.0/8 name={S}",
			"add addresses=10.0.0.0/8 name={S}",
			"add addresses=10.0.0.0/8 authentication-password={S} authentication-protocol=SHA1 encryption-password={S} encryption-protocol=AES name=v3user security=private",
			"set enabled=yes trap-community={S} trap-version=2",
		},
		Plain: []string{
			"/ppp secret",
			"/snmp community",
			"/interface wireless security-profiles",
			"set [ find default=yes ] supplicant-identity=MikroTik",
			"set always-allow-password-login=yes",
			"set [ find default-name=ether1 ] comment=\"uplink, password in vault\" name=wan",
			"add interface=bridge1 name=vlan10 vlan-id=10",
			"add allowed-address=10.10.0.3/32 interface=wg1 public-key=\"cQ3n4lRz8Ze0pV2sX5uY7aB9dF1hJ3lN5pR7tV9xZ1b=\"",
			"set name=router1",
			"add auth=md5 auth-id=1 interfaces=ether1",
			"add authentication-types=wpa2-psk mode=dynamic-keys name=prof3",
		},
	})

	vyatta := secretCases{
		Masked: []string{
			"set system login user admin authentication encrypted-password '$6${S}${S}'",
			"set system login user admin authentication plaintext-password '{S}'",
			"set service snmp v3 user mon auth encrypted-password '{S}'",
			"set service snmp v3 user mon privacy plaintext-password '{S}'",
			"set service snmp v3 user mon auth plaintext-key '{S}'",
			"set interfaces ethernet eth0 ip ospf authentication plaintext-password '{S}'",
			"set protocols bgp neighbor 192.0.2.1 password '{S}'",
			"set protocols bgp 65000 neighbor 192.0.2.2 password '{S}'",
			"set interfaces pppoe pppoe0 authentication password '{S}'",
			"set interfaces ethernet eth0 pppoe 0 password '{S}'",
			"set high-availability vrrp group LAN authentication password '{S}'",
			"set interfaces ethernet eth1 vrrp vrrp-group 10 authentication password '{S}'",
			"set service dns dynamic name dyn1 password '{S}'",
			"set vpn l2tp remote-access authentication local-users username vpn1 password '{S}'",
			"set protocols rip interface eth0 authentication md5 1 password '{S}'",
			"set system login radius server 10.0.0.9 key '{S}'",
			"set system login tacacs server 10.0.0.10 key '{S}'",
			"set system login radius-server 10.0.0.9 secret '{S}'",
			"set service pppoe-server authentication radius server 10.0.0.9 key '{S}'",
			"set vpn ipsec authentication psk PEER1 secret '{S}'",
			"set vpn ipsec site-to-site peer 203.0.113.5 authentication pre-shared-secret '{S}'",
			"set vpn l2tp remote-access ipsec-settings authentication pre-shared-secret '{S}'",
			"set interfaces wireguard wg0 private-key '{S}'",
			"set interfaces wireguard wg0 peer site2 preshared-key '{S}'",
			"set pki key rsa-1 private key '{S}'",
			"set pki certificate web private key '{S}'",
			"set pki openvpn shared-secret s2s key '{S}'",
			"set interfaces wireless wlan0 security wpa passphrase '{S}'",
			"set protocols ospf interface eth0 authentication md5 key-id 1 md5-key '{S}'",
			"set interfaces ethernet eth0 ip ospf authentication md5 key-id 1 md5-key '{S}'",
			"set service snmp community {S} authorization 'ro'",
			"set service snmp community '{S}' authorization 'rw'",
			"set service snmp trap-target 10.0.0.5 community '{S}'",
			"        community {S} {",
			"set service https api keys id netbox key '{S}'",
			"set system login user admin authentication otp key '{S}'",
			"set interfaces macsec macsec0 security mka cak '{S}'",
			"set system config-management commit-archive location 'scp://backup:{S}@192.0.2.10/cfg/'",
			"            encrypted-password $6${S}${S}",
			"            plaintext-password \"{S}\"",
			"        password {S}",
			"            pre-shared-secret {S}",
			"            secret {S}",
		},
		Plain: []string{
			"set system login user admin authentication public-keys me key 'AAAAC3NzaC1lZDI1NTE5AAAAIGx'",
			"set system login user admin authentication public-keys me type 'ssh-ed25519'",
			"set high-availability vrrp group LAN authentication type 'plaintext-password'",
			"set interfaces ethernet eth0 ip ospf authentication md5 key-id '1'",
			"set vpn ipsec authentication psk PEER1 id '203.0.113.5'",
			"set vpn ipsec authentication psk PEER1 secret-type 'plaintext'",
			"set interfaces wireguard wg0 peer site2 public-key 'bP2m3kQy7Yd9oU1rW4tX6zA8cE0gI2kM4oQ6sU8wY0a='",
			"set interfaces wireless wlan0 security wpa mode 'wpa2'",
			"set service snmp contact 'noc@example.net'",
			"set service snmp v3 user mon auth type 'sha'",
			"set system login radius server 10.0.0.9 port '1812'",
			"set system config-management commit-archive location 'https://backup.example.net:8443/cfg/'",
			"set interfaces ethernet eth0 description 'password reset portal'",
			"set system login user admin full-name 'Network admin'",
			"set pki certificate web certificate 'MIIDXTCCAkWgAwIBAgIJAJC1HiIAZAiIMA0'",
			"    community-name-policy strict",
		},
	}
	seed("vyos", vyatta)
	edgeos := vyatta
	edgeos.Masked = append(append([]string{}, vyatta.Masked...),
		"set service unms connection 'wss://uisp.example.net:443+{S}+allowSelfSignedCertificate'")
	edgeos.Plain = append(append([]string{}, vyatta.Plain...), "set service unms disable")
	seed("ubiquiti_edgeos", edgeos)

	seed("netgate_tnsr", secretCases{
		Masked: []string{
			"    password $6${S}${S}",
			"            password {S}",
			"snmp community community-name {S} source 10.0.0.1/32 security-name Cacti",
			"                psk {S}",
			"    private-key base64 {S}",
		},
		Plain: []string{
			"auth user nagios",
			"    global server-key restconf",
			"    global authentication-type client-certificate",
			"                send-community standard",
			"snmp access group-name ROGroup prefix exact model any level noauth read systemview write none",
			"snmp group group-name ROGroup security-name Cacti security-model v2c",
			"                type psk",
			"        authentication local",
			"    public-key base64 bP2m3kQy7Yd9oU1rW4tX6zA8cE0gI2kM4oQ6sU8wY0a=",
			"            description password-protected peer",
		},
	})

	configXML := secretCases{
		Masked: []string{
			"\t\t\t<bcrypt-hash>$2b$10${S}</bcrypt-hash>",
			"\t\t\t<sha512-hash>$6${S}${S}</sha512-hash>",
			"      <password>$2y$10${S}</password>",
			"\t\t\t<password><![CDATA[{S}]]></password>",
			"        <httpdPassword>{S}</httpdPassword>",
			"\t\t<smtppassword>{S}</smtppassword>",
			"\t\t<rocommunity>{S}</rocommunity>",
			"\t\t<trapstring>{S}</trapstring>",
			"\t\t<prv>{S}</prv>",
			"\t\t\t<shared_key>{S}</shared_key>",
			"\t\t\t<tls>{S}</tls>",
			"          <privkey>{S}</privkey>",
			"\t\t\t<pre-shared-key>{S}</pre-shared-key>",
			"\t\t\t<ipsecpsk>{S}</ipsecpsk>",
			"          <psk>{S}</psk>",
			"        <Key>{S}</Key>",
			"\t\t\t<radius_secret>{S}</radius_secret>",
			"\t\t\t<ldap_bindpw>{S}</ldap_bindpw>",
			"            <secret>$6${S}${S}</secret>",
			"      <otp_seed>{S}</otp_seed>",
		},
		Plain: []string{
			"\t\t\t<priv>page-all</priv>",
			"\t\t\t<priv>user-shell-access</priv>",
			"      <passwordauth>1</passwordauth>",
			"        <password/>",
			"        <password></password>",
			"      <preSharedKeys/>",
			"      <keyPairs/>",
			"      <keys/>",
			"      <keysig/>",
			"      <authorizedkeys/>",
			"        <httpdUsername>root</httpdUsername>",
			"\t\t<crt>LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t</crt>",
			"\t\t\t<descr><![CDATA[password reset portal]]></descr>",
			"\t\t<ssl-certref>676149b4a3898</ssl-certref>",
			"          <pubkey>bP2m3kQy7Yd9oU1rW4tX6zA8cE0gI2kM4oQ6sU8wY0a=</pubkey>",
		},
	}
	seed("pfsense", configXML)
	seed("opnsense", configXML)

	unixMasked := []string{
		"root:$6${S}${S}:19000:0:99999:7:::",
		"admin:!$y$j9T${S}${S}:19000:0:99999:7:::",
		"backup:$1${S}${S}:19000::::::",
		"www:$apr1${S}${S}",
		"    wpa-psk {S:5a6e4c2b1a09f8e7d6c5b4a3928170615a6e4c2b1a09f8e7d6c5b4a392817061}",
		"    wpa-passphrase \"{S}\"",
		"\tpsk=\"{S}\"",
		"\tpassword=\"{S}\"",
		"wpa_passphrase={S}",
		"secret={S}",
		"rocommunity {S} default -V systemonly",
		"rwcommunity6 {S} fd00::/8",
		"com2sec readonly default {S}",
		"trap2sink 10.0.0.5 {S}",
		"createUser v3user SHA \"{S}\" AES \"{S}\"",
		"password {S}",
		"enable password 8 {S}",
		" neighbor 192.0.2.1 password {S}",
		" neighbor PEERS password \"{S}\"",
		" ip ospf authentication-key {S}",
		" ip ospf message-digest-key 1 md5 {S}",
		"  key-string {S}",
		" isis password md5 {S}",
		" area-password clear {S}",
		"PrivateKey = {S}",
		"PresharedKey = {S}",
		": PSK \"{S}\"",
		"carol : EAP \"{S}\"",
		"1 SHA1 HEX:{S:8b2a7c3d9e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b}",
		"2 MD5 {S}",
		"        auth_pass {S}",
		"          password: \"{S}\"",
	}
	unixPlain := []string{
		"root:x:0:0:root:/root:/bin/bash",
		"daemon:*:19000:0:99999:7:::",
		"nobody:!:19000::::::",
		"127.0.0.1 localhost",
		"255 local",
		"auto wlan0",
		"iface wlan0 inet dhcp",
		"service password-encryption",
		"createuser _snmptrapusernameX",
		"rouser _snmptrapusernameX",
		"pass -p 10 1.3.6.1.2.1.1.1 /usr/share/snmp/sysDescr_pass.py",
		"pass_persist 1.3.6.1.2.1.17 /usr/share/snmp/bridge_pp.py",
		"agentxperms 777 777 snmp snmp",
		"PublicKey = bP2m3kQy7Yd9oU1rW4tX6zA8cE0gI2kM4oQ6sU8wY0a=",
		"PasswordAuthentication no",
		" neighbor 192.0.2.1 remote-as 65001",
		" ip ospf authentication message-digest",
		"key chain OSPF",
		"# default to using syslog. /etc/rsyslog.d/45-frr.conf places the log",
		"        auth_type PASS",
		"nameserver 192.0.2.53",
	}
	seed("linux", secretCases{Masked: unixMasked, Plain: unixPlain})

	seed("cumulus_linux", secretCases{
		Masked: append(append([]string{}, unixMasked...),
			"nv set system aaa user netops hashed-password '$6${S}${S}'",
			// NVUE's YAML: an SNMPv3 user's keys, each on the line after
			// its kind.
			"            username:\n              observium:\n                auth-sha:\n                  {S}:\n"+
				"                    encrypt-aes:\n                      {S}:\n                        view: systemonly",
			"              monitor:\n                auth-md5:\n                  {S}:\n                    view: systemonly",
			"nv set system aaa user admin2 password '{S}'",
			"nv set service snmp-server readonly-community {S} access any",
			"net add snmp-server readonly-community-v6 {S} access any",
			"nv set service snmp-server trap-destination 10.10.10.10 community-password {S} version 2c",
			"net add snmp-server trap-destination localhost vrf mgmt community-password {S} version 2c",
			"nv set service snmp-server username limiteduser1 auth-md5 {S} encrypt-aes {S}",
			"net add snmp-server username testuser auth-sha {S}",
			"nv set vrf default router bgp neighbor swp51 password {S}",
			"net add bgp neighbor swp52 password {S}",
			"net add bgp vrf RED neighbor 192.0.2.9 password {S}",
			"nv set interface swp1 router ospf authentication md5-key {S}",
			"net add interface swp2 ospf message-digest-key 1 md5 {S}",
			"nv set system aaa tacacs server 5 secret '{S}'",
			"nv set system aaa radius server 192.168.0.254 secret '{S}'",
			"            hashed-password: '$6${S}${S}'",
			"                secret: {S}",
			"                md5-key: {S}",
		),
		Plain: append(append([]string{}, unixPlain...),
			"            hashed-password: '*'",
			"nv set system aaa user cumulus hashed-password '*'",
			"nv set system aaa user netops role system-admin",
			"nv set vrf default router bgp neighbor 192.0.2.250 remote-as external",
			"nv set service snmp-server listening-address localhost",
			"net add snmp-server username testusernoauth auth-none",
			"            auth-sha:",
			"                encrypt-aes:",
			"                    view: xxxxxxxxxxxxx",
			"          sshd_config: |",
			"        authentication-retries: 10",
		),
	})

	seed("opengear", secretCases{
		Masked: []string{
			"config.users.user1.password $6${S}${S}",
			"config.system.password $1${S}${S}",
			"config.system.snmp.community {S}",
			"config.system.snmp.community2 {S}",
			"config.system.snmp.authpassword {S}",
			"config.system.snmp.privpassword {S}",
			"config.auth.radius.password {S}",
			"config.auth.tacacs.password {S}",
			"config.auth.ldap.password {S}",
			"config.system.smtp.password {S}",
			"config.ipsec.tunnels.tunnel1.secret {S}",
			"    hashed_password=\"$6${S}${S}\"",
			"radius.password=\"{S}\"",
			"  community={S}",
			"  private_key={S}",
			"  key={S}",
		},
		Plain: []string{
			"config.users.user1.username netops",
			"config.users.total 1",
			"config.users.user1.groups.group1 admin",
			"config.ports.port1.label password-reset-console",
			"config.system.snmp.protocol UDP",
			"config.auth.radius.auth_server1 10.0.0.9",
			"config.system.name og-lab",
			"  username=\"netops\"",
			"  keytype=rsa",
		},
	})

	seed("perle_iolan", secretCases{
		Masked: []string{
			"username netops privilege admin password 8 $6${S}${S}",
			"username oper password {S}",
			"tacacs-server key 7 $0${S}==",
			"radius-server key 7 $0${S}==",
			"tacacs-server host 10.0.0.10 key 7 $0${S}==",
		},
		Plain: []string{
			"Building running-config . . .",
			"service sequence-numbers",
			"service timestamps log datetime localtime show-timezone",
			"tty 1 mode line",
			"! ***** END of configuration *****",
			"hostname TEST-10",
		},
	})

	seed("apc_aos", secretCases{
		Masked: []string{
			"AccessControl1Community={S}",
			"AccessControl2Community = {S}",
			"TrapReceiver1Community={S}",
			"AdminPassword = {S}",
			"DevicePassword={S}",
			"RemotePassword = {S}",
			"UserProfile1AuthPhrase={S}",
			"UserProfile1EncryptPhrase={S} with spaces",
		},
		Plain: []string{
			"[NetworkSNMP]",
			";    To change the User Profile Auth Phrase, or the",
			";    User Profile Encrypt Phrase, use the UserProfile#AuthPhrase, or",
			";    UserProfile#EncryptPhrase keywords respectively where # is",
			"AccessControl1NMSIP=0.0.0.0",
			"AccessControl1AccessType=Read",
			"AccessControl3Community=",
			"TrapReceiver1NMSIP=192.0.2.239",
			"SuperUserName=apc",
			"AdministratorUserName=netops",
			"HostName=APC-0007",
		},
	})

	seed("eaton_network", secretCases{
		Masked: []string{
			`{"passphrase":"{S}","version":"1.0","features":{"smtp":{"data":{"dmeData":{"user":"ups","password":{"plaintext":null,"cyphered":"{S}"}}}}}}`,
			`  "passphrase": "{S}",`,
			`      "password": {"plaintext": null, "cyphered": "{S}"}`,
			`"bind":{"dn":"","password":{"plaintext":null,"ciphered":null,"cyphered":"{S}"}}`,
			`"secret":{"plaintext":"{S}","cyphered":null}`,
			`"password":{"lastChangeISO":"2024-11-03T23:45:26Z","history":["{S}","{S}"]}`,
			`        "password": {"lastChangeISO": "2024-11-03T23:45:26Z", "history": ["{S}"]}}`,
			`"v1":{"enabled":true,"communities":{"readOnly":{"name":"{S}","enabled":true},"readWrite":{"name":"{S}","enabled":false}}}`,
			`{"name":"LibreNMS","host":"nms.example.org","port":162,"community":"{S}","protocol":2,"user":"","enabled":true}`,
		},
		Plain: []string{
			`  "version": "1.0",`,
			`"users":[{"name":"readonly","allowWrite":false,"enabled":false,"auth":{"enabled":true,"algorithm":2}}]`,
			`"passwordStrength":{"minLength":8,"maxLength":32,"minUppercase":1}`,
			`"password":{"plaintext":null,"cyphered":null}`,
			`"proxyUsername":{"plaintext":null}`,
			`"defaultUsername":"management/devicebootstrap"`,
			`      "name": "lab-eaton_network", "contact": "noc@example.net", "location": "DC1 rack 10"}}}},`,
		},
	})

	seed("f5_tmos", secretCases{
		Masked: []string{
			"    encrypted-password $6${S}${S}",
			"    password $M${S}==",
			"    password-encrypted $M${S}",
			"    challenge-password {S}",
			"            auth-password-encrypted $M${S}",
			"            privacy-password-encrypted $M${S}",
			"    secret $M${S}",
			"    bind-pw $M${S}",
			"            community-name {S}",
			"            community {S}",
			"    passphrase $M${S}",
			"    preshared-key-encrypted $M${S}",
			" neighbor 10.0.0.1 password {S}",
		},
		Plain: []string{
			"auth password-policy { }",
			"auth user test {",
			"    password-memory 0",
			"    challenge-password",
			"    key-type rsa-private",
			"    key default.key",
			"    cert default.crt",
			"    security-type normal",
			"    communities {",
			"    description test",
			"Registration Key :            XXXXX-XXXXX-XXXXX-XXXXX-XXXXXXX",
			" neighbor 10.0.0.1 remote-as 65001",
			"    reg-key -",
		},
	})

	seed("citrix_netscaler", secretCases{
		Masked: []string{
			"set system user nsroot {S:21a8f0e3c9d7b6a5} -encrypted -hashmethod SHA512 -timeout 900",
			"add system user netops {S:f50bd6180034b7b3} -encrypted -hashmethod SHA512",
			"set ns rpcNode 192.0.2.10 -password {S:8a3b4c5d6e7f8091} -encrypted -encryptmethod ENCMTHD_3 -kek -suffix 2024_06_20_08_20_07 -srcIP *",
			"add authentication ldapAction ldap-corp -serverIP 192.0.2.30 -ldapBindDn svc@example.net -ldapBindDnPassword {S:cfdc5429092d8429} -encrypted -encryptmethod ENCMTHD_3",
			"add authentication radiusAction rad1 -serverIP 10.0.0.9 -radKey {S:0a1b2c3d4e5f6071} -encrypted -encryptmethod ENCMTHD_3",
			"add ssl certKey c1 -cert c.pem -key k.pem -passcrypt \"{S}\" -encrypted -encryptmethod ENCMTHD_3",
			"add snmp user mon -group g1 -authType SHA -authPasswd {S:9f8e7d6c5b4a3928} -encrypted -encryptmethod ENCMTHD_3 -privType AES -privPasswd {S:1827364554637281} -encrypted -encryptmethod ENCMTHD_3",
			"add snmp community {S} ALL",
			"set snmp community {S} GET",
			"add snmp trap generic 10.0.0.5 -communityName {S}",
			"add snmp trap specific 10.0.0.6 -version V2 -communityName {S} -severity Major",
		},
		Plain: []string{
			"#NS14.1 Build 25.56",
			"set ns hostName lab-ns",
			"bind system user netops superuser 100",
			"add authentication ldapAction ldap-corp -serverIP 192.0.2.30 -ldapBase \"dc=example,dc=net\" -ldapLoginName sAMAccountName",
			"set ns encryptionParams -method AES256",
			"add snmp manager 10.0.0.5",
			"add ssl certKey c2 -cert c2.pem -key k2.pem",
		},
	})

	seed("a10_acos", secretCases{
		Masked: []string{
			"admin netops password encrypted {S}",
			"admin ops password {S}",
			"snmp-server community read encrypted {S}",
			"snmp-server community write {S}",
			"tacacs-server host 10.0.0.10 secret encrypted {S}",
			"radius-server host 10.0.0.9 secret encrypted {S}",
			"  neighbor 192.0.2.1 password encrypted {S}",
		},
		Plain: []string{
			"admin netops",
			"  privilege write",
			"snmp-server enable service",
			"snmp-server location DC1",
			"tacacs-server host 10.0.0.10 timeout 5",
			"!Current configuration: 4211 bytes",
			"  neighbor 192.0.2.1 remote-as 65001",
		},
	})

	seed("nokia_sros", secretCases{
		Masked: []string{
			"                password \"$2y$10${S}\"",
			"                password \"{S}\" hash2",
			"            admin-password \"{S}\" hash2",
			"                    authentication-key \"{S}\" hash2",
			"                    message-digest-key 1 md5 \"{S}\" hash2",
			"                server 1 address 10.0.0.10 secret \"{S}\" hash2",
			"                server 2 address 10.0.0.11 secret \"{S}\"",
			"                entry 1 key \"{S}\" hash2 algorithm hmac-sha-256",
			"            community \"{S}\" r version both",
			"            community \"{S}\" rwa version v2c",
			"/configure system security snmp community \"{S}\" access-permissions r",
			"                trap-target \"nms\" address 10.0.0.5 snmpv2c notify-community \"{S}\"",
			"                    authentication-key \"{S}\"",
			"                pre-shared-key \"{S}\" hash2",
		},
		Plain: []string{
			"        name \"lab-nokia_sros\"",
			"            community \"CUSTOMERS\" members \"65000:100\"",
			"                user \"admin\"",
			"                    access console ftp snmp",
			"            hash-control read-version all write-version 2",
			"# Generated SUN NOV 29 01:47:09 2026 UTC",
			"                description \"password reset portal\"",
			"                authentication-type message-digest",
		},
	})

	seed("ciena_saos", secretCases{
		Masked: []string{
			"system aaa authentication users user \"netops\" config password \"$6${S}\" role super ",
			"system aaa authentication users user \"admin\" config username \"admin\" password-hashed \"$6${S}\" ",
			"system aaa server-groups server-group \"TAC\" servers server \"10.0.0.10\" tacacs config secret-key \"{S}\" ",
			"system aaa server-groups server-group \"RAD\" servers server \"10.0.0.9\" radius config secret-key {S}",
			"user create user gss access-level super secret {S}",
		},
		Plain: []string{
			"system aaa authentication config authentication-method \"AUTH_LOC\" ",
			"system config hostname \"lab-ciena_saos\" description \"5171\" ",
			"nacm rule-list \"admin-acl\" rule \"aaa-write-deny\" path \"/oc-sys:system/aaa/authentication\" access-operations \"create update delete\" action deny",
			"nacm groups group \"super\" user-name \"user\" \"diag\"",
			"nacm rule-list \"sec-exec-deny\" rule \"unlock-user-account\" rpc-name \"unlock-user-account\" access-operations \"exec\" action deny",
		},
	})

	// RouterOS, APC and Perle recordings, and the SAOS 10 one, hold no
	// secret (RouterOS was exported without one; config.ini's SNMP
	// section and Perle's users are cut from theirs).
	recorded("routeros_CHR_7.10.1")
	recorded("apcos_SMT750IC_v2.5.0.8")
	recorded("perle_SCG50-RRU_6.2.G3")
	recorded("saos10_Ciena-CN5171_saos-10-09-02-0181-RS3")
	recorded("tnsr_TNSR_23.06-3_with-misplaced-pager")
	recorded("tnsr_TNSR_23.11-3_short-config")
	recorded("tnsr_TNSR_24.10-3_short-config")
	recorded("tnsr_TNSR_25.02-2_long-config-and-pager-at-last-line",
		"$6$REMOVED123.REMOVED/123", "abcdABCD1234!@#", "community-name public")
	// The web GUI's private key (<prv>, the base64 of a PEM key) is the
	// lab unit's own; its first characters are those of every such key.
	recorded("pfsense_CE_2.7.2",
		"$2b$10$13u6qwCOwODv34GyCMgdWub6oQF3RX0rG7c3d3X4JvzuEmAXLYDd2",
		"<rocommunity>public", "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t")
	recorded("opnsense_nano_24.7",
		"$2y$10$YRVoF4SgskIsrXOvOQjGieB9XqHPRra9R7d80B3BZdbY/j21TwBfS",
		"$2y$11$R998XWJWIiCM6eQOHC5Ny.W5HAYz0Tr4mShDnYNreoPXnyAPyXIfa",
		"<rocommunity>public", "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t")
	// The local user's hash is 98 x; the licence's dossier and
	// signature (64 x each) are no secrets.
	recorded("tmos_BIG-IP-Tenant", strings.Repeat("x", 98))
	// NVUE's YAML: the SNMPv3 user's authentication and privacy keys
	// (16 x), mapping keys on lines of their own (see cumulusSecrets).
	recorded("cumulus_MSN2010_5.9.2_nvue", strings.Repeat("x", 16))
	recorded("cumulus_with-motd", strings.Repeat("x", 16))
	// The export is one line of JSON, printed over exec without echo or
	// prompt, which recordedText leaves out: TestSecretsEatonExport
	// masks it instead.
	recorded("eatonnetwork_NetworkM3_2.2.0")
}

// TestSecretsEatonExport masks the export a real Network-M3 card printed
// (its contributors put REDACTED in place of every encrypted value, the
// passphrase check and the password history; the SNMPv1 communities are
// public and private, the trap receiver's public): none is left, and the
// rest of the line is as it was.
func TestSecretsEatonExport(t *testing.T) {
	export := peConfig(t, "eatonnetwork_NetworkM3_2.2.0", "save_configuration -p \n")
	masked := SecretsOf("eaton_network").Mask(export, testMark, nil)
	for _, s := range []string{"REDACTED", `"public"`, `"private"`} {
		if strings.Contains(masked, s) {
			t.Errorf("secret %s survives", s)
		}
	}
	unmask := strings.NewReplacer(`"<secret:000000>"`, `""`)
	want := strings.NewReplacer(`"REDACTED"`, `""`, `"public"`, `""`, `"private"`, `""`).Replace(export)
	// A password history is masked as one list, one tag.
	history := regexp.MustCompile(`"history"\s*:\s*\[[^\]]*\]`)
	if got := history.ReplaceAllString(unmask.Replace(masked), `"history":[]`); got != history.ReplaceAllString(want, `"history":[]`) {
		t.Errorf("masking changed more than the secrets")
	}
}
