package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sort"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// vmView is what GET /vms reports of one VM: what the tests compare with the VSphereVMs and the IPAM addresses.
type vmView struct {
	Name         string        `json:"name"`
	InstanceUUID string        `json:"instanceUuid"`
	BiosUUID     string        `json:"biosUuid"`
	PowerState   string        `json:"powerState"`
	Template     bool          `json:"template"`
	NICs         []nicView     `json:"nics"`
	GuestNet     []guestView   `json:"guestNet"`
	Metadata     *string       `json:"metadata"`
	Userdata     *string       `json:"userdata"`
	ExtraConfig  []extraConfig `json:"extraConfig"`
}

type nicView struct {
	MAC     string `json:"mac"`
	Network string `json:"network"`
}

type guestView struct {
	MAC       string   `json:"mac"`
	Addresses []string `json:"addresses"`
}

type extraConfig struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// inspectHandler serves GET /vms, every VM of the simulator sorted by name, read under each VM's lock.
func inspectHandler(registry *simulator.Registry, logger *slog.Logger) http.Handler {
	ctx := &simulator.Context{Context: context.Background(), Map: registry}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /vms", func(w http.ResponseWriter, _ *http.Request) {
		views := []vmView{}
		for _, entity := range registry.All("VirtualMachine") {
			vm, ok := entity.(*simulator.VirtualMachine)
			if !ok {
				continue
			}
			ctx.WithLock(vm, func() { views = append(views, viewOf(registry, vm)) })
		}
		sort.Slice(views, func(i, j int) bool { return views[i].Name < views[j].Name })
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(views); err != nil {
			logger.Warn("writing /vms failed", "error", err.Error())
		}
	})
	return mux
}

func viewOf(registry *simulator.Registry, vm *simulator.VirtualMachine) vmView {
	view := vmView{Name: vm.Name, PowerState: string(vm.Runtime.PowerState), NICs: []nicView{}, GuestNet: []guestView{},
		ExtraConfig: []extraConfig{}}
	if vm.Config != nil {
		view.InstanceUUID = vm.Config.InstanceUuid
		view.BiosUUID = vm.Config.Uuid
		view.Template = vm.Config.Template
		for _, device := range vm.Config.Hardware.Device {
			if card, ok := device.(types.BaseVirtualEthernetCard); ok {
				nic := card.GetVirtualEthernetCard()
				view.NICs = append(view.NICs, nicView{MAC: nic.MacAddress, Network: networkName(registry, nic.Backing)})
			}
		}
		values := map[string]string{}
		for _, option := range vm.Config.ExtraConfig {
			if value := option.GetOptionValue(); value != nil {
				text := fmt.Sprint(value.Value)
				values[value.Key] = text
				view.ExtraConfig = append(view.ExtraConfig, extraConfig{Key: value.Key, Value: text})
			}
		}
		view.Metadata = decoded(values, metadataKey)
		view.Userdata = decoded(values, "guestinfo.userdata")
	}
	if vm.Guest != nil {
		for _, nic := range vm.Guest.Net {
			guest := guestView{MAC: nic.MacAddress, Addresses: []string{}}
			if nic.IpConfig != nil {
				for _, address := range nic.IpConfig.IpAddress {
					guest.Addresses = append(guest.Addresses, fmt.Sprintf("%s/%d", address.IpAddress, address.PrefixLength))
				}
			}
			view.GuestNet = append(view.GuestNet, guest)
		}
	}
	return view
}

// decoded is the value of key, base64-decoded when `<key>.encoding` says so; nil when the key is absent or undecodable.
func decoded(values map[string]string, key string) *string {
	raw, ok := values[key]
	if !ok {
		return nil
	}
	switch values[key+".encoding"] {
	case "base64", "b64":
		bytes, err := base64.StdEncoding.DecodeString(raw)
		if err != nil {
			return nil
		}
		text := string(bytes)
		return &text
	default:
		return &raw
	}
}

// networkName is the name of the network a NIC is attached to: a standard network by its device name, a distributed
// portgroup by looking its key up in the inventory.
func networkName(registry *simulator.Registry, backing types.BaseVirtualDeviceBackingInfo) string {
	switch b := backing.(type) {
	case *types.VirtualEthernetCardNetworkBackingInfo:
		return b.DeviceName
	case *types.VirtualEthernetCardDistributedVirtualPortBackingInfo:
		ref := types.ManagedObjectReference{Type: "DistributedVirtualPortgroup", Value: b.Port.PortgroupKey}
		if portgroup, ok := registry.Get(ref).(mo.Entity); ok {
			return portgroup.Entity().Name
		}
		return b.Port.PortgroupKey
	default:
		return ""
	}
}
