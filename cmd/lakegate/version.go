package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// version is lakegate's version as the servers report it: set at build
// time with -ldflags "-X main.version=…", or else the main module's
// version from the build information ("(devel)" for a build from a
// source tree without a version).
var version string

func init() {
	if version == "" {
		bi, ok := debug.ReadBuildInfo()
		version = buildVersion(bi, ok)
	}
}

// buildVersion returns the main module's version in bi.
func buildVersion(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi.Main.Version == "" {
		return "(devel)"
	}
	return bi.Main.Version
}

// versionText is what `lakegate version` prints: the version, then the
// VCS revision (marked when the tree had changes), its commit time and the
// Go version, where the build recorded them.
func versionText(version string, bi *debug.BuildInfo, ok bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "lakegate %s\n", version)
	if !ok {
		return b.String()
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		if settings["vcs.modified"] == "true" {
			rev += " (modified)"
		}
		fmt.Fprintf(&b, "revision: %s\n", rev)
	}
	if t := settings["vcs.time"]; t != "" {
		fmt.Fprintf(&b, "commit time: %s\n", t)
	}
	if bi.GoVersion != "" {
		fmt.Fprintf(&b, "go: %s\n", bi.GoVersion)
	}
	return b.String()
}

// runVersion is `lakegate version`.
func runVersion(args []string) (string, error) {
	fs := newFlagSet("version")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) > 0 {
		return "", fmt.Errorf("%w: version takes no arguments", errUsage)
	}
	bi, ok := debug.ReadBuildInfo()
	return versionText(version, bi, ok), nil
}
