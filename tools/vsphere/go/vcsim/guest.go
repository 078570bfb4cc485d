package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	"sigs.k8s.io/yaml"
)

// The keys CAPV writes the cloud-init metadata under (pkg/services/govmomi/extra/config.go in CAPV).
const (
	metadataKey         = "guestinfo.metadata"
	metadataEncodingKey = "guestinfo.metadata.encoding"
)

// netplanMetadata is the part of CAPV's metadata (pkg/util/constants.go, a netplan v2 document) a guest applies to its
// NICs: the static addresses of each NIC, matched by MAC address.
type netplanMetadata struct {
	Network struct {
		Ethernets map[string]struct {
			Match struct {
				MACAddress string `json:"macaddress"`
			} `json:"match"`
			Addresses []string `json:"addresses"`
		} `json:"ethernets"`
	} `json:"network"`
}

// guestReporter stands in for what runs inside a real VM: cloud-init applies the network configuration of
// guestinfo.metadata, and VMware Tools reports the resulting addresses in guest.net. It registers with the simulator's
// registry for object changes; a power-state or extraConfig change of a VM queues it, and one goroutine recomputes the
// VM's guest addresses under the VM's lock (never inside the callback, which runs while the changing task holds it).
type guestReporter struct {
	registry *simulator.Registry
	logger   *slog.Logger
	ctx      *simulator.Context
	queue    chan types.ManagedObjectReference
	mu       sync.Mutex
	queued   map[types.ManagedObjectReference]bool
}

func newGuestReporter(registry *simulator.Registry, logger *slog.Logger) *guestReporter {
	return &guestReporter{
		registry: registry,
		logger:   logger,
		// The minimal context the simulator's own multi-VM tasks use to lock and update objects.
		ctx:    &simulator.Context{Context: context.Background(), Map: registry},
		queue:  make(chan types.ManagedObjectReference, 1024),
		queued: map[types.ManagedObjectReference]bool{},
	}
}

// Reference names the reporter in the registry's handler map; it is no managed object.
func (r *guestReporter) Reference() types.ManagedObjectReference {
	return types.ManagedObjectReference{Type: "TallyGuestReporter", Value: "tally-guest-reporter"}
}

func (r *guestReporter) PutObject(_ *simulator.Context, obj mo.Reference) {
	if obj.Reference().Type == "VirtualMachine" {
		r.enqueue(obj.Reference())
	}
}

func (r *guestReporter) UpdateObject(_ *simulator.Context, obj mo.Reference, changes []types.PropertyChange) {
	if obj.Reference().Type != "VirtualMachine" {
		return
	}
	for _, change := range changes {
		if change.Name == "runtime.powerState" || strings.HasPrefix(change.Name, "config.extraConfig") {
			r.enqueue(obj.Reference())
			return
		}
	}
}

func (r *guestReporter) RemoveObject(_ *simulator.Context, _ types.ManagedObjectReference) {}

func (r *guestReporter) enqueue(ref types.ManagedObjectReference) {
	r.mu.Lock()
	already := r.queued[ref]
	r.queued[ref] = true
	r.mu.Unlock()
	// Each VM is queued at most once at a time, so the buffer only fills with more than 1024 VMs.
	if !already {
		r.queue <- ref
	}
}

func (r *guestReporter) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case ref := <-r.queue:
			r.mu.Lock()
			delete(r.queued, ref)
			r.mu.Unlock()
			r.report(ref)
		}
	}
}

// report sets guest.net (and guest.ipAddress) of a VM from its metadata when it is powered on, and clears them when
// it is not: a guest that does not run reports nothing.
func (r *guestReporter) report(ref types.ManagedObjectReference) {
	vm, ok := r.registry.Get(ref).(*simulator.VirtualMachine)
	if !ok {
		return // removed meanwhile
	}
	r.ctx.WithLock(vm, func() {
		if vm.Guest == nil || vm.Config == nil {
			return
		}
		running := vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn
		addresses := map[string][]netip.Prefix{}
		if running {
			var err error
			if addresses, err = metadataAddresses(vm.Config.ExtraConfig); err != nil {
				r.logger.Warn("cannot read the VM's network configuration", "vm", vm.Name, "error", err.Error())
				return
			}
		}
		nics := make([]types.GuestNicInfo, len(vm.Guest.Net))
		copy(nics, vm.Guest.Net)
		primary := ""
		reported := []string{}
		for i := range nics {
			nics[i].IpAddress = nil
			nics[i].IpConfig = nil
			prefixes := addresses[strings.ToLower(nics[i].MacAddress)]
			if len(prefixes) == 0 {
				continue
			}
			config := &types.NetIpConfigInfo{}
			for _, prefix := range prefixes {
				ip := prefix.Addr().String()
				nics[i].IpAddress = append(nics[i].IpAddress, ip)
				config.IpAddress = append(config.IpAddress, types.NetIpConfigInfoIpAddress{
					IpAddress:    ip,
					PrefixLength: int32(prefix.Bits()),
					State:        string(types.NetIpConfigInfoIpAddressStatusPreferred),
				})
				reported = append(reported, prefix.String())
				if primary == "" || (prefix.Addr().Is4() && !netip.MustParseAddr(primary).Is4()) {
					primary = ip
				}
			}
			nics[i].IpConfig = config
		}
		toolsStatus := string(types.VirtualMachineToolsRunningStatusGuestToolsNotRunning)
		if running {
			toolsStatus = string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)
		}
		r.ctx.Update(vm, []types.PropertyChange{
			{Name: "guest.net", Val: nics},
			{Name: "guest.ipAddress", Val: primary},
			{Name: "summary.guest.ipAddress", Val: primary},
			{Name: "guest.toolsRunningStatus", Val: toolsStatus},
		})
		r.logger.Info("guest addresses reported", "vm", vm.Name, "poweredOn", running, "addresses", reported)
	})
}

// metadataAddresses reads guestinfo.metadata (base64 or plain, as its encoding key says) and returns the static
// addresses of each NIC by lower-case MAC address. A VM without metadata has none.
func metadataAddresses(extraConfig []types.BaseOptionValue) (map[string][]netip.Prefix, error) {
	values := map[string]string{}
	for _, option := range extraConfig {
		if value := option.GetOptionValue(); value != nil {
			if text, ok := value.Value.(string); ok {
				values[value.Key] = text
			}
		}
	}
	raw, ok := values[metadataKey]
	if !ok || raw == "" {
		return map[string][]netip.Prefix{}, nil
	}
	document := []byte(raw)
	switch encoding := values[metadataEncodingKey]; encoding {
	case "base64", "b64":
		decoded, err := base64.StdEncoding.DecodeString(raw)
		if err != nil {
			return nil, fmt.Errorf("%s is not base64: %w", metadataKey, err)
		}
		document = decoded
	case "", "plain":
	default:
		return nil, fmt.Errorf("%s has an unknown encoding %q", metadataKey, encoding)
	}
	var metadata netplanMetadata
	if err := yaml.Unmarshal(document, &metadata); err != nil {
		return nil, fmt.Errorf("%s is not YAML: %w", metadataKey, err)
	}
	addresses := map[string][]netip.Prefix{}
	for id, ethernet := range metadata.Network.Ethernets {
		mac := strings.ToLower(ethernet.Match.MACAddress)
		for _, address := range ethernet.Addresses {
			prefix, err := netip.ParsePrefix(address)
			if err != nil {
				return nil, fmt.Errorf("ethernet %s: address %q is not address/prefix: %w", id, address, err)
			}
			addresses[mac] = append(addresses[mac], prefix)
		}
	}
	return addresses, nil
}
