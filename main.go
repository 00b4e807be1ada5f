// Command backupd backs up network device configurations.
package main

import (
	_ "time/tzdata" // IANA zones for X-Timezone even on hosts without zoneinfo

	"backupd/app/cli"
)

func main() { cli.Execute() }
