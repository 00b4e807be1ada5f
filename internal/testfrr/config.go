package testfrr

import "strings"

// DefaultConfig is the frr.conf a router starts with when its Options
// give none: BGP with customers, a transit and an IPv6 peer (one
// shut down), prefix-lists, an as-path and a community list, route-maps
// in both directions and a neighbour password (a secret, for masking).
//
// It is written the way FRR 8.4 writes it back: the text between
// "frr version …" and "end" of show running-config is exactly this, so a
// test can compare a backup with it line by line. "bgp no-rib" is there
// because bgpd without zebra (-Z) shows it anyway. The neighbours are
// on documentation addresses and bgpd lives in a network namespace
// with no route, so no BGP session ever leaves the machine.
func DefaultConfig(hostname string) string {
	return strings.ReplaceAll(defaultConfig, "HOSTNAME", hostname)
}

const defaultConfig = `frr defaults traditional
hostname HOSTNAME
bgp no-rib
service integrated-vtysh-config
!
router bgp 65001
 bgp router-id 192.0.2.1
 no bgp default ipv4-unicast
 neighbor 192.0.2.10 remote-as 65010
 neighbor 192.0.2.10 description customer-a
 neighbor 192.0.2.20 remote-as 64500
 neighbor 192.0.2.20 description transit-1
 neighbor 192.0.2.20 password s3cret-bgp
 neighbor 2001:db8::20 remote-as 64500
 neighbor 2001:db8::20 description transit-1-v6
 neighbor 2001:db8::20 shutdown
 !
 address-family ipv4 unicast
  network 203.0.113.0/24
  neighbor 192.0.2.10 activate
  neighbor 192.0.2.10 route-map RM-CUSTOMER-IN in
  neighbor 192.0.2.20 activate
  neighbor 192.0.2.20 route-map RM-TRANSIT-OUT out
 exit-address-family
 !
 address-family ipv6 unicast
  network 2001:db8:100::/48
  neighbor 2001:db8::20 activate
 exit-address-family
exit
!
ip prefix-list PL-CUSTOMER-IN seq 5 permit 198.51.100.0/24 le 28
ip prefix-list PL-CUSTOMER-IN seq 100 deny any
ip prefix-list PL-OWN seq 5 permit 203.0.113.0/24
!
ipv6 prefix-list PL6-OWN seq 5 permit 2001:db8:100::/48
!
bgp as-path access-list AS-CUSTOMER seq 5 permit ^65010$
!
bgp community-list standard CL-CUSTOMER seq 5 permit 65001:100
!
route-map RM-CUSTOMER-IN permit 10
 match as-path AS-CUSTOMER
 match ip address prefix-list PL-CUSTOMER-IN
 set community 65001:100 additive
 set local-preference 200
exit
!
route-map RM-TRANSIT-OUT permit 10
 match ip address prefix-list PL-OWN
exit
!
route-map RM-TRANSIT-OUT deny 20
exit
!
`
