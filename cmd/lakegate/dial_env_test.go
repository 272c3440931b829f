package main

import (
	"errors"
	"testing"
)

// TestAddrFromEnvironment: $LAKEGATE_ADDR is --addr's default (the
// doc-tests point the README's commands at their own gateway with it),
// --addr wins over it, and an address from the environment gets the same
// clear-text check as one on the command line.
func TestAddrFromEnvironment(t *testing.T) {
	tests := []struct {
		name, env string
		args      []string
		want      string
		usageErr  bool
	}{
		{"unset", "", nil, "127.0.0.1:8815", false},
		{"from the environment", "127.0.0.1:9999", nil, "127.0.0.1:9999", false},
		{"the flag wins", "127.0.0.1:9999", []string{"--addr", "127.0.0.1:7777"}, "127.0.0.1:7777", false},
		{"non-loopback from the environment", "10.1.2.3:8815", nil, "10.1.2.3:8815", true},
		{"non-loopback with TLS", "10.1.2.3:8815", []string{"--tls"}, "10.1.2.3:8815", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LAKEGATE_ADDR", tt.env)
			t.Setenv("LAKEGATE_TOKEN", "lg_test")
			fs := newFlagSet("sql")
			c := addConnFlags(fs)
			if _, err := parseArgs(fs, tt.args); err != nil {
				t.Fatal(err)
			}
			if *c.addr != tt.want {
				t.Errorf("addr %q, want %q", *c.addr, tt.want)
			}
			err := c.resolve()
			if got := errors.Is(err, errUsage); got != tt.usageErr {
				t.Errorf("resolve: %v, want usage error %v", err, tt.usageErr)
			}
		})
	}
}
