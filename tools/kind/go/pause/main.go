// Command pause is the first process of every Pod sandbox: it keeps the Pod's namespaces alive, reaps the orphans
// re-parented to it as PID 1, and exits when the runtime asks it to stop.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is the pause image tag kubeadm 1.34 lists; printed by `pause -v` like upstream's.
const version = "3.10.1"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Printf("pause.go version: %s\n", version)
		return
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "warning: pause should be the first process")
	}
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for received := range signals {
		if received != syscall.SIGCHLD {
			fmt.Fprintf(os.Stderr, "shutting down, got signal: %s\n", received)
			os.Exit(0)
		}
		// One SIGCHLD may stand for several exited children.
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
