package main

import (
	"context"
	"fmt"
	"net/url"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
)

// The names simulator.VPX() gives its inventory with one datacenter, one cluster and one distributed portgroup.
const (
	datacenterName   = "DC0"
	clusterName      = "DC0_C0"
	datastoreName    = "LocalDS_0"
	clusterVMName    = "DC0_C0_RP0_VM0"
	standardNetwork  = "VM Network"
	portgroupNetwork = "DC0_DVPG0"
)

type inventory struct {
	datacenter   string
	cluster      string
	datastore    string
	resourcePool string
	folder       string
	networks     []string
	template     string
}

// prepareInventory turns the cluster's VM into the template CAPV clones, through the vSphere API as an administrator
// would (rename, mark as template): the model's VMs already have a disk and a NIC, which is what a clone needs.
func prepareInventory(ctx context.Context, server *url.URL, thumbprint, templateName string) (inventory, error) {
	client, err := login(ctx, server, thumbprint)
	if err != nil {
		return inventory{}, fmt.Errorf("logging in to the simulator: %w", err)
	}
	defer func() { _ = client.Logout(context.Background()) }()

	finder := find.NewFinder(client.Client, false)
	datacenter, err := finder.Datacenter(ctx, datacenterName)
	if err != nil {
		return inventory{}, err
	}
	finder.SetDatacenter(datacenter)
	vm, err := finder.VirtualMachine(ctx, clusterVMName)
	if err != nil {
		return inventory{}, err
	}
	task, err := vm.Rename(ctx, templateName)
	if err != nil {
		return inventory{}, err
	}
	if err := task.Wait(ctx); err != nil {
		return inventory{}, fmt.Errorf("renaming %s to %s: %w", clusterVMName, templateName, err)
	}
	if err := vm.MarkAsTemplate(ctx); err != nil {
		return inventory{}, fmt.Errorf("marking %s as a template: %w", templateName, err)
	}
	pool, err := finder.ResourcePool(ctx, fmt.Sprintf("/%s/host/%s/Resources", datacenterName, clusterName))
	if err != nil {
		return inventory{}, err
	}
	folders, err := datacenter.Folders(ctx)
	if err != nil {
		return inventory{}, err
	}
	for _, network := range []string{standardNetwork, portgroupNetwork} {
		if _, err := finder.Network(ctx, network); err != nil {
			return inventory{}, fmt.Errorf("the simulator has no network %q: %w", network, err)
		}
	}
	return inventory{
		datacenter:   datacenterName,
		cluster:      clusterName,
		datastore:    datastoreName,
		resourcePool: pool.InventoryPath,
		folder:       folders.VmFolder.InventoryPath,
		networks:     []string{standardNetwork, portgroupNetwork},
		template:     templateName,
	}, nil
}

// login connects as CAPV does: the certificate is trusted by its thumbprint, not skipped.
func login(ctx context.Context, server *url.URL, thumbprint string) (*govmomi.Client, error) {
	soapClient := soap.NewClient(server, false)
	soapClient.SetThumbprint(server.Host, thumbprint)
	vimClient, err := vim25.NewClient(ctx, soapClient)
	if err != nil {
		return nil, err
	}
	client := &govmomi.Client{Client: vimClient, SessionManager: session.NewManager(vimClient)}
	if err := client.Login(ctx, server.User); err != nil {
		return nil, err
	}
	return client, nil
}
