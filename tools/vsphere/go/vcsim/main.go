// Command vcsim runs govmomi's vCenter simulator for the CAPV scenario: on 127.0.0.1 with TLS (a throwaway
// certificate made at start), an inventory CAPV can clone a VM from, and a stand-in for the guest of every VM: once a
// VM is powered on, the addresses of the network configuration CAPV wrote into it (guestinfo.metadata) are reported as
// its guest's addresses, as cloud-init and VMware Tools would on a real VM. A second loopback listener (plain HTTP)
// answers GET /vms with what the simulator holds, for the tests to compare against Kubernetes.
//
// It prints one JSON line to stdout once both listeners answer (the address, the certificate's thumbprint and the
// inventory's names) and logs JSON lines to stderr; it stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/vmware/govmomi/simulator"
	// Registers the vAPI (REST) endpoints: CAPV opens a tags session next to the SOAP one.
	_ "github.com/vmware/govmomi/vapi/simulator"
)

// ready is the line the caller waits for on stdout.
type ready struct {
	URL          string   `json:"url"`
	Server       string   `json:"server"`
	Thumbprint   string   `json:"thumbprint"`
	InspectURL   string   `json:"inspectUrl"`
	Datacenter   string   `json:"datacenter"`
	Cluster      string   `json:"cluster"`
	Datastore    string   `json:"datastore"`
	ResourcePool string   `json:"resourcePool"`
	Folder       string   `json:"folder"`
	Networks     []string `json:"networks"`
	Template     string   `json:"template"`
}

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := run(logger); err != nil {
		logger.Error("vcsim failed", "error", err.Error())
		os.Exit(1)
	}
}

func run(logger *slog.Logger) error {
	listen := flag.String("listen", "127.0.0.1:0", "address of the vCenter API (loopback only)")
	inspectListen := flag.String("inspect-listen", "127.0.0.1:0", "address of the inspection endpoint (loopback only)")
	username := flag.String("username", "tally", "the only user the simulator accepts")
	template := flag.String("template", "tally-template", "name of the VM template CAPV clones")
	tmpDir := flag.String("tmpdir", "", "where the simulated datastore keeps its files (default: the system's)")
	readyFile := flag.String("ready-file", "", "also write the ready line to this file (written whole, then renamed)")
	flag.Parse()
	// The password is not a flag: a command line is visible to every user of the machine.
	password := os.Getenv("VCSIM_PASSWORD")
	if password == "" {
		return errors.New("VCSIM_PASSWORD is not set")
	}
	for _, address := range []string{*listen, *inspectListen} {
		if err := requireLoopback(address); err != nil {
			return err
		}
	}

	if *tmpDir != "" {
		// The model creates its datastore directories with os.MkdirTemp, which reads TMPDIR.
		if err := os.MkdirAll(*tmpDir, 0o700); err != nil {
			return err
		}
		if err := os.Setenv("TMPDIR", *tmpDir); err != nil {
			return err
		}
	}

	cert, thumbprint, err := throwawayCertificate()
	if err != nil {
		return fmt.Errorf("creating the serving certificate: %w", err)
	}

	model := simulator.VPX()
	// Two VMs (one on the standalone host, one in the cluster); the cluster's becomes the template.
	model.Machine = 1
	model.Autostart = false
	if err := model.Create(); err != nil {
		return fmt.Errorf("creating the simulator inventory: %w", err)
	}
	defer model.Remove()
	model.Service.TLS = tlsConfig(cert)
	model.Service.Listen = &url.URL{Host: *listen, User: url.UserPassword(*username, password)}
	model.Service.RegisterEndpoints = true

	reporter := newGuestReporter(model.Map(), logger)
	model.Map().AddHandler(reporter)

	server := model.Service.NewServer()
	defer server.Close()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go reporter.run(ctx)

	inventory, err := prepareInventory(ctx, server.URL, thumbprint, *template)
	if err != nil {
		return fmt.Errorf("preparing the inventory: %w", err)
	}

	inspectListener, err := net.Listen("tcp", *inspectListen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", *inspectListen, err)
	}
	inspect := &http.Server{Handler: inspectHandler(model.Map(), logger), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := inspect.Serve(inspectListener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("inspection endpoint failed", "error", err.Error())
		}
	}()
	defer func() { _ = inspect.Close() }()

	line, err := json.Marshal(ready{
		URL:          fmt.Sprintf("https://%s/sdk", server.URL.Host),
		Server:       server.URL.Host,
		Thumbprint:   thumbprint,
		InspectURL:   fmt.Sprintf("http://%s", inspectListener.Addr().String()),
		Datacenter:   inventory.datacenter,
		Cluster:      inventory.cluster,
		Datastore:    inventory.datastore,
		ResourcePool: inventory.resourcePool,
		Folder:       inventory.folder,
		Networks:     inventory.networks,
		Template:     inventory.template,
	})
	if err != nil {
		return err
	}
	fmt.Println(string(line))
	if *readyFile != "" {
		if err := writeAtomically(*readyFile, append(line, '\n')); err != nil {
			return fmt.Errorf("writing %s: %w", *readyFile, err)
		}
	}
	logger.Info("simulator ready", "server", server.URL.Host, "inspect", inspectListener.Addr().String())

	<-ctx.Done()
	logger.Info("stopping")
	return nil
}

// requireLoopback refuses any listen address that is not on loopback: nothing here is meant to be reachable.
func requireLoopback(address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", address, err)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("listen address %q is not a loopback address", address)
	}
	return nil
}

// writeAtomically writes a file under a temporary name and renames it, so a reader never sees half of it.
func writeAtomically(path string, content []byte) error {
	temporary := path + ".tmp"
	if err := os.WriteFile(temporary, content, 0o600); err != nil {
		return err
	}
	return os.Rename(temporary, path)
}
