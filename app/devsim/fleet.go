package devsim

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// FleetOptions describe many devices started together.
type FleetOptions struct {
	// Count is the number of devices.
	Count int
	// Platforms are assigned round-robin (every platform when empty).
	Platforms []string
	// Template is copied for every device; Platform, Hostname and Seed
	// are set per device (Seed = Template.Seed + index). Listen addresses
	// default to SSH and telnet both on 127.0.0.1:0.
	Template Options
}

// Fleet is a set of running devices.
type Fleet struct {
	devices []*Device
}

// maxFleet bounds a fleet; each device holds one or two listeners.
const maxFleet = 5000

// StartFleet starts every device, or none: on error those already started
// are closed.
func StartFleet(opts FleetOptions) (*Fleet, error) {
	if opts.Count < 1 || opts.Count > maxFleet {
		return nil, fmt.Errorf("devsim: fleet size %d outside 1..%d", opts.Count, maxFleet)
	}
	platforms := opts.Platforms
	if len(platforms) == 0 {
		platforms = Platforms()
	}
	f := &Fleet{}
	for i := 0; i < opts.Count; i++ {
		o := opts.Template
		o.Platform = platforms[i%len(platforms)]
		p, ok := Lookup(o.Platform)
		if !ok {
			f.Close()
			return nil, fmt.Errorf("devsim: unknown platform %q", o.Platform)
		}
		o.Hostname = fmt.Sprintf("%s-%03d", strings.ToLower(p.DefaultHostname), i+1)
		o.Seed = opts.Template.Seed + int64(i)
		o.Failures = append([]Failure(nil), opts.Template.Failures...)
		if o.SSHAddr == "" && o.TelnetAddr == "" {
			o.SSHAddr, o.TelnetAddr = "127.0.0.1:0", "127.0.0.1:0"
		}
		d, err := NewDevice(o)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("devsim: fleet device %d: %w", i+1, err)
		}
		f.devices = append(f.devices, d)
	}
	return f, nil
}

// Devices returns the devices in start order.
func (f *Fleet) Devices() []*Device { return append([]*Device(nil), f.devices...) }

// Close stops every device in parallel and waits for all of them.
func (f *Fleet) Close() error {
	errs := make([]error, len(f.devices))
	var wg sync.WaitGroup
	for i, d := range f.devices {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = d.Close()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
