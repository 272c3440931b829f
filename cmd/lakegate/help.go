package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// Help follows the Go CLIs people know (go, gh, kubectl): `-h` and
// `--help` print the command's help on stdout and exit 0; flags are shown
// as --flag; every help ends with examples; flags may follow positional
// arguments. The flag package prints nothing itself (newFlagSet): its
// output would show a flag's default, and a default can be a secret (the
// admin commands' --token defaults to $LAKEGATE_TOKEN).

// helpRequest is the answer of a command asked for its help: run prints
// text on stdout and exits 0.
type helpRequest struct{ text string }

func (h *helpRequest) Error() string { return "help requested" }

// newFlagSet returns a FlagSet for the command `lakegate name` that prints
// nothing: errors go back to the caller (flagError) and help is written by
// commandHelp.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// flagError turns an error of fs.Parse into the command's answer: a help
// request becomes the command's help, anything else a usage error that
// points to it.
func flagError(fs *flag.FlagSet, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return &helpRequest{text: commandHelp(fs)}
	}
	return fmt.Errorf("%w: %s (see \"lakegate %s --help\")", errUsage, flagMessage(err), fs.Name())
}

var flagNameRE = regexp.MustCompile(`flag -{1,2}([^\s:]+)`)

// flagMessage rewords the flag package's errors in the --flag style.
func flagMessage(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return "unknown flag " + dashed(strings.TrimLeft(name, "-"))
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return "flag " + dashed(strings.TrimLeft(name, "-")) + " needs a value"
	}
	return flagNameRE.ReplaceAllStringFunc(msg, func(m string) string {
		return dashed(strings.TrimLeft(strings.TrimPrefix(m, "flag "), "-"))
	})
}

// dashed writes a flag name as it is typed: -f, --file.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// parseArgs parses args with fs, flags and positional arguments in any
// order ("--" ends the flags; "-" is an argument), and returns the
// positional arguments.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil || isBoolFlag(f) {
			continue // a bool, or unknown (Parse reports it)
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	if err := fs.Parse(flags); err != nil {
		return nil, flagError(fs, err)
	}
	return pos, nil
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// secretFlag reports whether a flag's value is a secret, whose default is
// never printed.
func secretFlag(name string) bool {
	return name == "token" || strings.HasSuffix(name, "-token") || strings.Contains(name, "password") || strings.Contains(name, "secret")
}

// writeFlags prints fs's flags for which keep is true (all when nil),
// aliases (flags sharing one value, such as -f and --file) on one line.
func writeFlags(w io.Writer, fs *flag.FlagSet, keep func(name string) bool) {
	type entry struct {
		names []string
		f     *flag.Flag
	}
	var entries []*entry
	byValue := map[any]*entry{}
	fs.VisitAll(func(f *flag.Flag) {
		if keep != nil && !keep(f.Name) {
			return
		}
		// Aliases share a pointer; values of other kinds (a map) are not
		// comparable, and never aliased.
		var key any = f
		if v := reflect.ValueOf(f.Value); v.Kind() == reflect.Pointer {
			key = v.Pointer()
		}
		if e, ok := byValue[key]; ok {
			e.names = append(e.names, f.Name)
			return
		}
		e := &entry{names: []string{f.Name}, f: f}
		byValue[key] = e
		entries = append(entries, e)
	})
	for _, e := range entries {
		slices.SortFunc(e.names, func(a, b string) int { return len(a) - len(b) })
		typ, usage := flag.UnquoteUsage(e.f)
		var names []string
		for _, n := range e.names {
			names = append(names, dashed(n))
		}
		head := strings.Join(names, ", ")
		if len(e.names[0]) > 1 {
			head = "    " + head // line long flags up under the aliased ones
		}
		if typ != "" {
			head += " " + typ
		}
		if d := e.f.DefValue; !secretFlag(e.names[0]) && !strings.Contains(usage, "(default") && !zeroDefault(d) {
			if typ == "string" {
				d = fmt.Sprintf("%q", d)
			}
			usage += " (default " + d + ")"
		}
		writeWrapped(w, "  "+head, usage)
	}
}

func zeroDefault(d string) bool {
	switch d {
	case "", "0", "false", "0s", "[]":
		return true
	}
	return false
}

// writeWrapped prints head, then text wrapped to 80 columns in a column
// of its own (or below head when head is wide).
func writeWrapped(w io.Writer, head, text string) {
	const col, width = 30, 80
	line := head
	if len(head) >= col-1 {
		fmt.Fprintln(w, head)
		line = ""
	}
	line += strings.Repeat(" ", col-len(line))
	n := 0
	for _, word := range strings.Fields(text) {
		if n > 0 && len(line)+1+len(word) > width {
			fmt.Fprintln(w, line)
			line, n = strings.Repeat(" ", col), 0
		}
		if n > 0 {
			line += " "
		}
		line += word
		n++
	}
	fmt.Fprintln(w, strings.TrimRight(line, " "))
}

// cmdDoc is the help of one command beyond its flags.
type cmdDoc struct {
	usage    string // usage lines, each without "lakegate "
	about    string
	examples string
}

// docs holds the help of each command, by its FlagSet's name.
var docs = map[string]cmdDoc{
	"serve": {
		usage: "serve [flags]",
		about: "Run the all-in-one gateway: Flight SQL, the embedded engine, a single-node metasrv and, on the\n" +
			"first start, a demo tenant whose tokens are printed once and kept in <data-dir>/tokens.txt.",
		examples: "lakegate serve\n" +
			"lakegate serve --data-dir /var/lib/lakegate --flight-addr 127.0.0.1:9815",
	},
	"gateway": {
		usage: "gateway --principals FILE --ticket-keys FILE --stage FILE --metasrv ADDRS --metasrv-token-file FILE [flags]",
		about: "Run a stateless Flight SQL gateway replica against a metasrv cluster.",
		examples: "lakegate gateway --principals principals.yaml --ticket-keys ticket-keys --stage stage.json \\\n" +
			"    --metasrv https://ms1:8816,https://ms2:8816,https://ms3:8816 --metasrv-token-file gateway.token \\\n" +
			"    --metasrv-ca ca.pem --flight-addr 0.0.0.0:8815 --tls-cert gw.pem --tls-key gw-key.pem",
	},
	"metasrv": {
		usage: "metasrv --node-id ID --principals FILE [flags]",
		about: "Run a metadata service node: the Raft-replicated catalog and its REST API.",
		examples: "lakegate metasrv --node-id ms1 --principals principals.yaml --bootstrap\n" +
			"lakegate metasrv --node-id ms2 --principals principals.yaml --join ms1:8816 --peer-token-file ms2.token",
	},
	"sql": {
		usage: "sql [flags] [QUERY]\nsql [flags] -f FILE\nsql [flags] < SCRIPT",
		about: "Run SQL against a gateway: the statements of QUERY (separated by ;), of a file, of a script on\n" +
			"stdin, or, with none of these and a terminal on stdin, an interactive shell (type \\? there).\n" +
			"Statements run one by one; a script stops at the first failing statement unless --force.\n" +
			"The session (USE, --catalog, --schema) lasts until the command ends.",
		examples: "export LAKEGATE_TOKEN=lg_…   # or --token\n" +
			"lakegate sql 'SELECT status, count(*) FROM sales.orders GROUP BY status'\n" +
			"lakegate sql 'SELECT * FROM sales.orders' --format csv > orders.csv\n" +
			"lakegate sql --schema sales 'SHOW TABLES; DESCRIBE orders'\n" +
			"lakegate sql -f report.sql --format markdown\n" +
			"echo 'SELECT 1;' | lakegate sql --format json\n" +
			"lakegate sql --catalog warehouse --schema public     # a shell in an upstream catalog",
	},
	"ingest": {
		usage: "ingest [flags] FILE SCHEMA.TABLE",
		about: "Load a local Parquet or CSV file into a table through Flight SQL bulk ingest.\n\n" +
			"A CSV column's type is the narrowest of BOOLEAN, BIGINT, DECIMAL(p,s), DOUBLE, DATE\n" +
			"(YYYY-MM-DD), TIMESTAMP (YYYY-MM-DD HH:MM:SS[.ffffff]) and VARCHAR that holds every value of\n" +
			"the first --sample-rows rows; an empty field is NULL. --schema gives some or all columns'\n" +
			"types instead. A later value that does not fit its column's type stops the load (nothing is\n" +
			"loaded) and names its line, column, value and the type expected.",
		examples: "lakegate ingest orders.parquet sales.orders_2026\n" +
			"lakegate ingest orders.csv sales.orders_2026 --mode append --csv-delimiter ';'\n" +
			"lakegate ingest orders.csv sales.orders_2026 --schema 'id:bigint,price:decimal(15,2),day:date'\n" +
			"lakegate ingest big.csv sales.events --sample-rows 100000",
	},
	"mcp": {
		usage: "mcp --metalake M --stdio [flags]\nmcp --metalake M --http-addr ADDR [flags]",
		about: strings.TrimSpace(mcpUsage[strings.Index(mcpUsage, "\n\n")+2:]),
		examples: "lakegate mcp --metalake demo --stdio\n" +
			"lakegate mcp --metalake demo --http-addr 127.0.0.1:8818",
	},
	"token new": {
		usage: "token new",
		about: "Print a new random bearer token and the SHA-256 line to paste into a principal map. The token\n" +
			"is shown once and stored nowhere; the principal map keeps only its hash.",
		examples: "lakegate token new",
	},
	"version": {
		usage:    "version\n--version",
		about:    "Print lakegate's module version, VCS revision and Go version.",
		examples: "lakegate version\nlakegate --version",
	},
}

// commandHelp returns the help of the command fs parses: its docs entry
// and its flags.
func commandHelp(fs *flag.FlagSet) string {
	d, ok := docs[fs.Name()]
	if !ok {
		d = cmdDoc{usage: fs.Name() + " [flags]"}
	}
	var b strings.Builder
	if d.about != "" {
		b.WriteString(d.about + "\n\n")
	}
	b.WriteString("Usage:\n")
	for _, u := range strings.Split(d.usage, "\n") {
		b.WriteString("  lakegate " + u + "\n")
	}
	if hasFlags(fs, nil) {
		b.WriteString("\nFlags:\n")
		writeFlags(&b, fs, nil)
	}
	writeExamples(&b, d.examples)
	return b.String()
}

func hasFlags(fs *flag.FlagSet, keep func(string) bool) bool {
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		if keep == nil || keep(f.Name) {
			n++
		}
	})
	return n > 0
}

func writeExamples(b *strings.Builder, examples string) {
	if examples == "" {
		return
	}
	b.WriteString("\nExamples:\n")
	for _, e := range strings.Split(examples, "\n") {
		b.WriteString("  " + e + "\n")
	}
}

const usage = `lakegate is a governed multi-tenant SQL gateway: Flight SQL clients connect, every statement
is authorized through metasrv and run on an embedded engine over Parquet files.

Usage:
  lakegate <command> [flags] [arguments]

Commands:
  serve      run the all-in-one gateway (embedded engine, demo tenant)
  gateway    run a stateless Flight SQL gateway replica against a metasrv cluster
  metasrv    run a metadata service node (Raft-replicated catalog, REST API)
  sql        run SQL against a gateway: a query, a script, or an interactive shell
  ingest     load a local Parquet or CSV file into a table (Flight SQL bulk ingest)
  admin      manage metasrv over its REST API (cluster, metalakes, tags, grants, …)
  mcp        serve MCP tools over metasrv's REST API for agents (stdio or streamable HTTP)
  token new  print a new bearer token and its principal-map hash line
  cert       make a development CA and the certificates it signs (TLS for tests and trials)
  version    print the version (also --version)

Examples:
  lakegate serve
  lakegate sql --token lg_… 'SELECT * FROM sales.orders LIMIT 5'
  lakegate sql --schema sales            # the interactive shell
  lakegate admin --metalake demo catalog list

Run "lakegate <command> --help" for a command's flags and examples.
`

// adminGlobal reports whether name is one of admin's global flags.
func adminGlobal(name string) bool {
	switch name {
	case "server", "token", "metalake", "json", "tls-ca", "insecure-no-tls":
		return true
	}
	return false
}

// adminHelp returns the help of `lakegate admin`.
func adminHelp() string {
	var b strings.Builder
	b.WriteString("Manage metasrv over its REST API.\n\n")
	b.WriteString(strings.Replace(adminUsage, "usage: lakegate admin", "Usage:\n  lakegate admin", 1))
	writeExamples(&b, "export LAKEGATE_TOKEN=lg_… LAKEGATE_METALAKE=demo\n"+
		"lakegate admin catalog list\n"+
		"lakegate admin schema create lake.marketing --comment 'campaign data'\n"+
		"lakegate admin grant sales_analyst schema lake.sales USE_SCHEMA,SELECT_TABLE\n"+
		"lakegate admin --server https://metasrv:8816 --tls-ca ca.pem cluster status")
	b.WriteString("\nRun \"lakegate admin <command> --help\" for a command's flags and examples.\n")
	return b.String()
}

// adminGroupHelp returns the help of an admin command group (catalog,
// tag, …): its lines of adminUsage; ok is false when group is none.
func adminGroupHelp(group string) (string, bool) {
	var lines []string
	for _, l := range strings.Split(adminUsage, "\n") {
		if strings.HasPrefix(l, "  "+group+" ") {
			lines = append(lines, "  lakegate admin "+strings.TrimPrefix(l, "  "))
		}
	}
	if len(lines) == 0 {
		return "", false
	}
	var b strings.Builder
	b.WriteString("Usage:\n" + strings.Join(lines, "\n") + "\n")
	var ex []string
	for _, k := range sortedKeys(adminExamples) {
		if strings.HasPrefix(k, group+" ") {
			ex = append(ex, adminExamples[k])
		}
	}
	writeExamples(&b, strings.Join(ex, "\n"))
	b.WriteString("\nRun \"lakegate admin " + group + " <verb> --help\" for a command's flags.\n")
	return b.String(), true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// adminCommandHelp returns the help of `lakegate admin <cmd>` (a.name),
// whose arguments are argsUsage and flags fs's.
func adminCommandHelp(name, argsUsage string, fs *flag.FlagSet) string {
	var b strings.Builder
	b.WriteString("Usage:\n  lakegate " + strings.TrimSpace(name+" "+argsUsage) + "\n")
	local := func(n string) bool { return !adminGlobal(n) }
	if hasFlags(fs, local) {
		b.WriteString("\nFlags:\n")
		writeFlags(&b, fs, local)
	}
	b.WriteString("\nGlobal flags (accepted anywhere on the line):\n")
	writeFlags(&b, fs, adminGlobal)
	switch strings.TrimPrefix(name, "admin ") {
	case "grant", "revoke":
		b.WriteString(privilegesHelp())
	}
	writeExamples(&b, adminExamples[strings.TrimPrefix(name, "admin ")])
	return b.String()
}

// adminExamples holds one example line per admin command.
var adminExamples = map[string]string{
	"cluster status":      "lakegate admin cluster status",
	"cluster remove-node": "lakegate admin cluster remove-node ms3",
	"metalake create":     "lakegate admin metalake create acme --owner admin@acme --comment 'Acme Corp'",
	"metalake list":       "lakegate admin metalake list",
	"whoami":              "lakegate admin whoami",
	"principals reload":   "lakegate admin principals reload --gateway 10.0.0.7:8815",
	"metalake get":        "lakegate admin metalake get acme",
	"metalake drop":       "lakegate admin metalake drop acme --force",
	"catalog create": "lakegate admin catalog create warehouse --type upstream \\\n" +
		"    --property upstream.address=10.0.0.7:31337 --property upstream.dialect=mysql",
	"catalog list":     "lakegate admin catalog list",
	"catalog get":      "lakegate admin catalog get lake",
	"catalog drop":     "lakegate admin catalog drop scratch --cascade",
	"catalog alter":    "lakegate admin catalog alter scratch --comment 'temporary tables' --set owner.team=data",
	"schema create":    "lakegate admin schema create lake.marketing --comment 'campaign data'",
	"schema list":      "lakegate admin schema list lake",
	"schema get":       "lakegate admin schema get lake.sales",
	"schema drop":      "lakegate admin schema drop lake.marketing --cascade",
	"schema alter":     "lakegate admin schema alter lake.marketing --rename campaigns",
	"table list":       "lakegate admin table list lake.sales",
	"table get":        "lakegate admin table get lake.sales.orders",
	"table versions":   "lakegate admin table versions lake.sales.orders",
	"tag create":       "lakegate admin tag create pii --allowed-values email,ssn --comment 'personal data'",
	"tag list":         "lakegate admin tag list table lake.hr.employees",
	"tag get":          "lakegate admin tag get pii",
	"tag drop":         "lakegate admin tag drop pii",
	"tag objects":      "lakegate admin tag objects pii --value ssn",
	"tag attach":       "lakegate admin tag attach column lake.hr.employees.ssn pii=ssn",
	"tag detach":       "lakegate admin tag detach column lake.hr.employees.ssn pii",
	"policy list":      "lakegate admin policy list",
	"policy get":       "lakegate admin policy get mask_ssn",
	"policy create":    "lakegate admin policy create mask_ssn --type column_mask --content '{\"mask\":\"REDACT\"}'",
	"policy alter":     "lakegate admin policy alter mask_ssn --comment 'last four digits only'",
	"policy enable":    "lakegate admin policy enable mask_ssn",
	"policy disable":   "lakegate admin policy disable mask_ssn",
	"policy delete":    "lakegate admin policy delete mask_ssn",
	"policy attach":    "lakegate admin policy attach mask_ssn pii=ssn",
	"policy detach":    "lakegate admin policy detach mask_ssn pii",
	"domain create":    "lakegate admin domain create finance --new-tag domain_finance --comment 'Finance'",
	"domain list":      "lakegate admin domain list --under finance",
	"domain get":       "lakegate admin domain get finance",
	"domain alter":     "lakegate admin domain alter finance --rename fin --set steward=ana@acme",
	"domain publish":   "lakegate admin domain publish finance",
	"domain unpublish": "lakegate admin domain unpublish finance",
	"domain move":      "lakegate admin domain move payroll finance",
	"domain detach":    "lakegate admin domain detach payroll",
	"domain set-tag":   "lakegate admin domain set-tag finance domain=finance",
	"domain delete":    "lakegate admin domain delete finance",
	"domain members":   "lakegate admin domain members finance --types table --name-contains order",
	"domain of":        "lakegate admin domain of table lake.sales.orders",
	"grant": "lakegate admin grant sales_analyst schema lake.sales USE_SCHEMA,SELECT_TABLE\n" +
		"lakegate admin grant sales_analyst schema lake.sales SELECT_TABLE --dry-run   # who would gain what",
	"explain":   "lakegate admin explain bob@acme SELECT_TABLE table:lake.sales.orders",
	"revoke":    "lakegate admin revoke sales_analyst table lake.sales.orders SELECT_TABLE --deny",
	"owner get": "lakegate admin owner get table lake.sales.orders",
	"owner set": "lakegate admin owner set table lake.sales.orders user bob@acme\n" +
		"lakegate admin owner set schema lake.sales group data-eng --dry-run   # who would gain what",
	"role create":      "lakegate admin role create auditor",
	"role list":        "lakegate admin role list",
	"role get":         "lakegate admin role get sales_analyst",
	"role drop":        "lakegate admin role drop auditor",
	"user create":      "lakegate admin user create ana@acme",
	"user list":        "lakegate admin user list",
	"user grant-role":  "lakegate admin user grant-role ana@acme sales_analyst auditor",
	"user revoke-role": "lakegate admin user revoke-role ana@acme auditor",
	"events":           "lakegate admin events --since 1200 --limit 50",
	"access-log": "lakegate admin access-log --user analyst@demo --since 24h\n" +
		"lakegate admin access-log --table sales.orders --denied --format jsonl --addr gateway:8815 --tls",
	"bench writes": "lakegate admin --metalake bench bench writes --writers 16 --writes 2000",
}

func isHelpFlag(s string) bool {
	switch s {
	case "-h", "--h", "-help", "--help":
		return true
	}
	return false
}
