package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

func option(key, value string) types.BaseOptionValue {
	return &types.OptionValue{Key: key, Value: value}
}

// A clone given CAPV-style metadata for its NIC (as CAPV's reconcileMetadata writes it) and powered on: the reporter
// reports the configured address, with its prefix, as the guest's.
func TestGuestReporterReportsTheConfiguredAddresses(t *testing.T) {
	model := simulator.VPX()
	model.Machine = 1
	model.Autostart = false
	if err := model.Create(); err != nil {
		t.Fatal(err)
	}
	defer model.Remove()
	reporter := newGuestReporter(model.Map(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	model.Map().AddHandler(reporter)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go reporter.run(ctx)
	server := model.Service.NewServer()
	defer server.Close()
	client, err := login(ctx, server.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	finder := find.NewFinder(client.Client, true)
	datacenter, err := finder.Datacenter(ctx, datacenterName)
	if err != nil {
		t.Fatal(err)
	}
	finder.SetDatacenter(datacenter)
	template, err := finder.VirtualMachine(ctx, clusterVMName)
	if err != nil {
		t.Fatal(err)
	}
	folder, err := finder.DefaultFolder(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// govmomi v0.52.0's simulator drops a clone spec's Config (extraConfig, UUIDs, CPUs, memory): CloneVMTask assigns
	// them to a copy of its config struct (simulator/virtual_machine.go, `dst, src := config, req.Spec.Config`). CAPV's
	// user data therefore never reaches a simulated VM; its metadata does, through ReconfigVM_Task as here.
	task, err := template.Clone(ctx, folder, "clone", types.VirtualMachineCloneSpec{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := task.WaitForResult(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vm := object.NewVirtualMachine(client.Client, info.Result.(types.ManagedObjectReference))
	var props mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"config"}, &props); err != nil {
		t.Fatal(err)
	}
	var mac string
	for _, device := range props.Config.Hardware.Device {
		if card, ok := device.(types.BaseVirtualEthernetCard); ok {
			mac = card.GetVirtualEthernetCard().MacAddress
		}
	}
	metadata := fmt.Sprintf("network:\n  version: 2\n  ethernets:\n    id0:\n      match:\n        macaddress: %q\n"+
		"      addresses:\n      - \"10.9.0.5/24\"\n      gateway4: \"10.9.0.1\"\n", mac)
	reconfigure, err := vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{
		option(metadataKey, base64.StdEncoding.EncodeToString([]byte(metadata))), option(metadataEncodingKey, "base64"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := reconfigure.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	power, err := vm.PowerOn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := power.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if ip, err := vm.WaitForIP(ctx); err != nil || ip != "10.9.0.5" {
		t.Fatalf("the guest reports %q (%v), not the configured 10.9.0.5", ip, err)
	}
	if err := vm.Properties(ctx, vm.Reference(), []string{"guest.net"}, &props); err != nil {
		t.Fatal(err)
	}
	nic := props.Guest.Net[0]
	if nic.MacAddress != mac || nic.IpConfig == nil || nic.IpConfig.IpAddress[0].PrefixLength != 24 {
		t.Errorf("guest.net is %+v", nic)
	}
}

// A VM powered off again reports no address, as a stopped guest reports nothing.
func TestGuestReporterClearsAddressesOfAPoweredOffVM(t *testing.T) {
	model := simulator.VPX()
	model.Machine = 1
	if err := model.Create(); err != nil {
		t.Fatal(err)
	}
	defer model.Remove()
	reporter := newGuestReporter(model.Map(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	model.Map().AddHandler(reporter)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go reporter.run(ctx)
	server := model.Service.NewServer()
	defer server.Close()
	client, err := login(ctx, server.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	finder := find.NewFinder(client.Client, true)
	vm, err := finder.VirtualMachine(ctx, "/"+datacenterName+"/vm/"+clusterVMName)
	if err != nil {
		t.Fatal(err)
	}
	var props mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"config.hardware.device"}, &props); err != nil {
		t.Fatal(err)
	}
	mac := ""
	for _, device := range props.Config.Hardware.Device {
		if card, ok := device.(types.BaseVirtualEthernetCard); ok {
			mac = card.GetVirtualEthernetCard().MacAddress
		}
	}
	metadata := fmt.Sprintf("network:\n  version: 2\n  ethernets:\n    id0:\n      match:\n        macaddress: %q\n"+
		"      addresses:\n      - \"fd00:9::5/64\"\n", mac)
	reconfigure, err := vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{
		option(metadataKey, metadata),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := reconfigure.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if ip, err := vm.WaitForIP(ctx); err != nil || ip != "fd00:9::5" {
		t.Fatalf("the running guest reports %q (%v), not fd00:9::5 (plain-text metadata)", ip, err)
	}
	off, err := vm.PowerOff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := off.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		if err := vm.Properties(ctx, vm.Reference(), []string{"guest.net"}, &props); err != nil {
			t.Fatal(err)
		}
		if len(props.Guest.Net) > 0 && len(props.Guest.Net[0].IpAddress) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("guest.net still reports %+v after power-off", props.Guest.Net)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
