// SPDX-License-Identifier: Apache-2.0

// Package faultproxy is a TCP forwarder that sits between a client under test (kcmd) and the
// real kube-apiserver and injects transport faults on request: every open connection dropped
// (both sides closed with FIN), reset (the client side closed with SO_LINGER 0, so the client
// reads ECONNRESET), or stalled (no byte forwarded in either direction, and no new connection
// dialled, for a while; the sockets stay open). It does not terminate TLS and does not look at
// the bytes: the client still verifies the apiserver's certificate end to end, so the proxy is
// test tooling, not a fake server. Standard library only.
package faultproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy forwards every connection accepted on its loopback listener to Target.
type Proxy struct {
	Target string
	ln     net.Listener

	mu    sync.Mutex
	conns map[*pair]struct{}

	stallUntil atomic.Int64 // UnixNano; forwarding and dialling wait until then

	// Counters, read with Load.
	Accepted, Drops, Resets, Stalls atomic.Int64
}

type pair struct{ client, server net.Conn }

// Start listens on 127.0.0.1 (a free port) and forwards to target ("host:port").
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{Target: target, ln: ln, conns: map[*pair]struct{}{}}
	go p.accept()
	return p, nil
}

// Addr is the proxy's listening address ("127.0.0.1:port").
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) waitStall() {
	for {
		d := time.Until(time.Unix(0, p.stallUntil.Load()))
		if d <= 0 {
			return
		}
		time.Sleep(d)
	}
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.Accepted.Add(1)
		go p.serve(c)
	}
}

func (p *Proxy) serve(c net.Conn) {
	p.waitStall()
	s, err := net.DialTimeout("tcp", p.Target, 5*time.Second)
	if err != nil {
		_ = c.Close()
		return
	}
	pr := &pair{client: c, server: s}
	p.mu.Lock()
	if p.conns == nil { // closed
		p.mu.Unlock()
		_ = c.Close()
		_ = s.Close()
		return
	}
	p.conns[pr] = struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { p.copy(s, c); done <- struct{}{} }()
	go func() { p.copy(c, s); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = s.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, pr)
	p.mu.Unlock()
}

// copy forwards src to dst chunk by chunk, holding each chunk while the proxy is stalled.
func (p *Proxy) copy(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.waitStall()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return
			}
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			return
		}
	}
}

func (p *Proxy) take() []*pair {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*pair, 0, len(p.conns))
	for pr := range p.conns {
		out = append(out, pr)
	}
	return out
}

// DropAll closes every open connection on both sides (an orderly FIN); it returns how many.
func (p *Proxy) DropAll() int {
	prs := p.take()
	for _, pr := range prs {
		_ = pr.client.Close()
		_ = pr.server.Close()
	}
	if len(prs) > 0 {
		p.Drops.Add(1)
	}
	return len(prs)
}

// ResetAll aborts every open connection: the client side gets a TCP RST (SO_LINGER 0), the
// server side is closed. It returns how many.
func (p *Proxy) ResetAll() int {
	prs := p.take()
	for _, pr := range prs {
		if tc, ok := pr.client.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = pr.client.Close()
		_ = pr.server.Close()
	}
	if len(prs) > 0 {
		p.Resets.Add(1)
	}
	return len(prs)
}

// Stall holds every byte in both directions, and every new connection's dial, for d.
func (p *Proxy) Stall(d time.Duration) {
	p.stallUntil.Store(time.Now().Add(d).UnixNano())
	p.Stalls.Add(1)
}

// Open is the number of connections being forwarded now.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Close stops accepting and closes every connection.
func (p *Proxy) Close() {
	_ = p.ln.Close()
	p.stallUntil.Store(0)
	prs := p.take()
	p.mu.Lock()
	p.conns = nil
	p.mu.Unlock()
	for _, pr := range prs {
		_ = pr.client.Close()
		_ = pr.server.Close()
	}
}
