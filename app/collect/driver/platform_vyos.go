package driver

func init() {
	// VyOS operational mode is a shell; op-mode commands do not work over
	// a plain exec request, so the interactive shell is used. Releases up
	// to 1.4 know "set terminal length 0", later ones "terminal length 0";
	// the one a release does not know is rejected and ignored.
	Register(Platform{
		ID: "vyos", Name: "VyOS", Vendor: "VyOS",
		Aliases:         []string{"vyatta"},
		DefaultCommands: lines("show configuration commands"),
		Dialogue: Dialogue{
			Prompt:       re(`^[\w.\-]+@[\w.\-]+(:[^\s]*)?[$#]$`),
			PromptLines:  juniperPromptLines,
			Pager:        re(`^:$`),
			PagingOff:    []string{"set terminal length 0", "terminal length 0"},
			CommandError: re(`^\s*(Invalid command:|Incomplete command:)`),
		},
	})
}
