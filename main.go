// Command backupd backs up network device configurations.
package main

import "backupd/app/cli"

func main() { cli.Execute() }
