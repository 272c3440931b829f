package main

import (
	"crypto/rand"
	"fmt"
	"io"

	"lakegate/authz"
)

// runTokenNew prints a fresh token and the line to paste into a principal map.
// The token itself is shown once and stored nowhere.
func runTokenNew(args []string, stdout io.Writer) error {
	pos, err := parseArgs(newFlagSet("token new"), args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: token new takes no arguments", errUsage)
	}
	tok, err := authz.NewToken(rand.Reader)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "token:  %s\nsha256: %s\n\nprincipal map line:\n      tokens: [{sha256: %s}]\n",
		tok, authz.HashToken(tok), authz.HashToken(tok))
	return nil
}
