// Command forward is the vCenter simulator Pod's second container: it accepts TCP connections on the Pod's address
// and copies each one, byte for byte, to a loopback address in the same Pod, where the simulator listens (it refuses
// any other address). It adds no authentication of its own and needs none: what it forwards is the simulator's TLS
// endpoint, which accepts only the credentials it was started with. At most --max-connections at once.
package main

import (
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"os"
	"time"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	listen := flag.String("listen", ":8989", "address to accept connections on")
	to := flag.String("to", "127.0.0.1:8990", "loopback address to forward them to")
	maxConnections := flag.Int("max-connections", 64, "connections served at once; more wait")
	flag.Parse()
	host, _, err := net.SplitHostPort(*to)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		logger.Error("--to must be a loopback address", "to", *to)
		os.Exit(2)
	}
	listener, err := net.Listen("tcp", *listen)
	if err != nil {
		logger.Error("listen failed", "listen", *listen, "error", err.Error())
		os.Exit(1)
	}
	logger.Info("forwarding", "listen", listener.Addr().String(), "to", *to)
	slots := make(chan struct{}, *maxConnections)
	for {
		conn, err := listener.Accept()
		if err != nil {
			logger.Error("accept failed", "error", err.Error())
			os.Exit(1)
		}
		slots <- struct{}{}
		go func() {
			defer func() { <-slots }()
			forward(conn, *to, logger)
		}()
	}
}

func forward(client net.Conn, to string, logger *slog.Logger) {
	defer client.Close()
	upstream, err := net.DialTimeout("tcp", to, 10*time.Second)
	if err != nil {
		logger.Warn("dial failed", "to", to, "error", err.Error())
		return
	}
	defer upstream.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, err := io.Copy(dst, src)
		if err != nil && !errors.Is(err, net.ErrClosed) {
			logger.Debug("copy ended", "error", err.Error())
		}
		// Half-close so the other side sees the end of this direction.
		if tcp, ok := dst.(*net.TCPConn); ok {
			_ = tcp.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(upstream, client)
	go pipe(client, upstream)
	<-done
	<-done
}
