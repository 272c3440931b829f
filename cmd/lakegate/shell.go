package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// errInterrupted is a lineReader's answer to Ctrl-C at the prompt: the
// line being typed (and the statement being entered) is dropped.
var errInterrupted = errors.New("interrupted")

// shell runs the statements of `lakegate sql`, from the query argument, a
// script or the interactive prompt, over one connection whose session
// (USE, the catalog) lasts as long as the command: the session cookie is
// kept by the client (dial).
type shell struct {
	ctx            context.Context // carries the bearer token
	cl             *flightsql.Client
	out, errOut    io.Writer
	format         string
	escapeFormulas bool
	write          resultWriter
	timing         bool
	force          bool
	interactive    bool
	now            func() time.Time
	onInterrupt    func(cancel func()) (restore func())

	// The session as the prompt shows it (interactive only).
	tenant, catalog, schema string
	// sessionOpen: the gateway holds a session for this client, opened by
	// SetSessionOptions (see openSession).
	sessionOpen bool
	quit        bool
}

// start sets the session up: --catalog through the catalog session
// option, then --schema through USE (which checks that the schema exists
// and is visible), and reads the session back for the prompt.
func (s *shell) start(catalog, schema string) error {
	if catalog != "" {
		if err := s.setOptions(map[string]any{"catalog": catalog}); err != nil {
			return fmt.Errorf("--catalog: %w", err)
		}
	}
	if schema != "" {
		if err := s.exec("USE " + quoteIdent(schema)); err != nil {
			return fmt.Errorf("--schema: %w", shellError(err))
		}
	}
	if s.interactive {
		if err := s.refresh(); err != nil {
			return fmt.Errorf("reading the session from the gateway: %w", shellError(err))
		}
	}
	return nil
}

// quoteIdent quotes a name as a MySQL identifier.
func quoteIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// quoteName quotes a dotted name (schema.table) part by part.
func quoteName(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = quoteIdent(strings.Trim(p, "`"))
	}
	return strings.Join(parts, ".")
}

// quoteString writes s as a MySQL string literal.
func quoteString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// refresh reads the session's options (tenant, catalog, schema) for the
// prompt.
func (s *shell) refresh() error {
	r, err := s.cl.GetSessionOptions(s.ctx, &flight.GetSessionOptionsRequest{})
	if err != nil {
		return err
	}
	o := r.GetSessionOptions()
	s.tenant, s.catalog, s.schema = o["tenant"].GetStringValue(), o["catalog"].GetStringValue(), o["schema"].GetStringValue()
	return nil
}

// openSession makes sure the gateway holds a session for this client
// before a USE. A session opened by USE itself would be lost: the cookie
// comes back on the DoPut stream of ExecuteUpdate, whose headers the
// Flight client hands its cookie middleware only when the stream is
// collected. SetSessionOptions is a unary call, whose cookie is kept;
// the catalog "" is the default, so it changes nothing.
func (s *shell) openSession() error {
	if s.sessionOpen {
		return nil
	}
	// GetFlightInfo is unary: its response headers, the session cookie
	// among them, reach the cookie middleware before the call returns. A
	// DoAction's (SetSessionOptions) may reach it only after the next call
	// has gone out without the cookie, so that call would start another
	// session.
	if _, err := s.cl.GetSqlInfo(s.ctx, []flightsql.SqlInfo{flightsql.SqlInfoFlightSqlServerName}); err != nil {
		return err
	}
	s.sessionOpen = true
	return nil
}

// close ends the gateway's session, if one was opened, so that it does
// not wait out its idle time there.
func (s *shell) close() {
	if !s.sessionOpen {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
	defer cancel()
	_, _ = s.cl.CloseSession(ctx, &flight.CloseSessionRequest{})
}

// setOptions sets session options (SetSessionOptions); a refused option
// is an error.
func (s *shell) setOptions(opts map[string]any) error {
	if err := s.openSession(); err != nil {
		return err
	}
	vals, err := flight.NewSessionOptionValues(opts)
	if err != nil {
		return err
	}
	r, err := s.cl.SetSessionOptions(s.ctx, &flight.SetSessionOptionsRequest{SessionOptions: vals})
	if err != nil {
		return err
	}
	errs := r.GetErrors()
	var refused []string
	for _, name := range sortedKeys(errs) {
		why := "refused"
		switch errs[name].GetValue() {
		case flight.SetSessionOptionsResultErrorInvalidName:
			why = "no such session option"
		case flight.SetSessionOptionsResultErrorInvalidValue:
			why = "invalid value"
		}
		refused = append(refused, "session option "+name+": "+why)
	}
	if len(refused) > 0 {
		return errors.New(strings.Join(refused, "; "))
	}
	return nil
}

// exec runs one statement and prints its result. Ctrl-C (when routed to
// the shell) cancels it.
func (s *shell) exec(stmt string) error {
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	if s.onInterrupt != nil {
		defer s.onInterrupt(cancel)()
	}
	start := s.now()
	switch kindOf(stmt) {
	case kindUse:
		if err := s.openSession(); err != nil {
			return err
		}
		if _, err := s.cl.ExecuteUpdate(ctx, stmt); err != nil {
			return err
		}
		if s.interactive {
			return s.refresh()
		}
		return nil
	case kindUpdate:
		n, err := s.cl.ExecuteUpdate(ctx, stmt)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(s.out, s.footerText(fmt.Sprintf("%d rows written", n), s.now().Sub(start)))
		return err
	}
	schema, recs, err := s.query(ctx, stmt)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if err != nil {
		return err
	}
	if err := s.write(s.out, schema, recs); err != nil {
		return err
	}
	text := s.footerText(fmt.Sprintf("%d rows", rowCount(recs)), s.now().Sub(start))
	switch {
	case s.interactive || s.format == "table":
		_, err = fmt.Fprintln(s.out, text)
	case s.timing:
		// Programs read the other formats: the footer goes aside.
		_, err = fmt.Fprintln(s.errOut, text)
	}
	return err
}

// query runs a query and collects its result.
func (s *shell) query(ctx context.Context, stmt string) (*arrow.Schema, []arrow.RecordBatch, error) {
	info, err := s.cl.Execute(ctx, stmt)
	if err != nil {
		return nil, nil, err
	}
	return fetchAll(ctx, s.cl, info)
}

// fetchAll reads every endpoint of info and collects the result; the
// schema is info's when no endpoint sent one.
func fetchAll(ctx context.Context, cl *flightsql.Client, info *flight.FlightInfo) (*arrow.Schema, []arrow.RecordBatch, error) {
	var err error
	var schema *arrow.Schema
	var recs []arrow.RecordBatch
	for _, ep := range info.GetEndpoint() {
		rdr, err := cl.DoGet(ctx, ep.GetTicket())
		if err != nil {
			return nil, recs, err
		}
		schema = rdr.Schema()
		for rdr.Next() {
			rec := rdr.RecordBatch()
			rec.Retain()
			recs = append(recs, rec)
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil {
			return nil, recs, err
		}
	}
	if schema == nil {
		if schema, err = flight.DeserializeSchema(info.GetSchema(), nil); err != nil {
			return nil, recs, err
		}
	}
	return schema, recs, nil
}

// footerText is the line after a result: what, and the elapsed time when
// timing is on.
func (s *shell) footerText(what string, d time.Duration) string {
	if !s.timing {
		return "(" + what + ")"
	}
	return "(" + what + ", " + formatDuration(d) + ")"
}

// formatDuration writes d for a person: milliseconds below a second.
func formatDuration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// shellError renders an error for the terminal: a gRPC status as its
// message and code, a cancelled statement as such.
func shellError(err error) error {
	if errors.Is(err, context.Canceled) || status.Code(err) == codes.Canceled {
		return errors.New("statement cancelled")
	}
	if st, ok := status.FromError(err); ok && st.Code() != codes.OK {
		return fmt.Errorf("%s (%s)", st.Message(), st.Code())
	}
	return err
}

// runScript runs the statements of a script (a query argument, a file,
// stdin) in order. It stops at the first failing statement unless
// force; then it runs them all and fails if any failed. source names the
// script in errors ("" for the query argument).
func (s *shell) runScript(in lineReader, source string) error {
	total, failed := 0, 0
	var stop error
	err := s.feed(in, false, func(text string, line int, meta bool) bool {
		total++
		var err error
		if meta {
			err = s.meta(text)
		} else {
			err = s.exec(text)
		}
		if err == nil {
			return !s.quit
		}
		failed++
		switch {
		case source != "":
			err = fmt.Errorf("%s:%d: %w", source, line, shellError(err))
		case total > 1:
			err = fmt.Errorf("statement %d: %w", total, shellError(err))
		default:
			err = shellError(err)
		}
		if !s.force {
			stop = err
			return false
		}
		printError(s.errOut, err)
		return true
	})
	switch {
	case err != nil:
		return err
	case stop != nil:
		return stop
	case failed > 0:
		return fmt.Errorf("%d of %d statements failed", failed, total)
	}
	return nil
}

// runInteractive is the interactive shell: a prompt showing the session,
// line editing and history (ed), statements ended by ;, meta commands.
func (s *shell) runInteractive(ed lineReader, addr string) (err error) {
	defer func() {
		if cerr := ed.Close(); err == nil {
			err = cerr
		}
	}()
	if s.onInterrupt != nil {
		// Between statements Ctrl-C does nothing (at the prompt the editor
		// reads it as a key): it must not end the shell.
		defer s.onInterrupt(func() {})()
	}
	who := ""
	if s.tenant != "" {
		who = " as tenant " + printable(s.tenant)
	}
	fmt.Fprintf(s.out, "lakegate sql: connected to %s%s. End statements with ;\n"+
		"\\? lists the shell's commands; \\q or Ctrl-D leaves.\n", printable(addr), who)
	return s.feed(ed, true, func(text string, _ int, meta bool) bool {
		var err error
		if meta {
			err = s.meta(text)
		} else {
			err = s.exec(text)
		}
		if err != nil {
			fmt.Fprintln(s.errOut, "ERROR:", printable(shellError(err).Error()))
		}
		return !s.quit
	})
}

// feed reads in a line at a time and hands run each statement as its ;
// arrives, with the line it starts on, and each meta command (a line
// starting with \ or . where a statement would start). It returns at the
// end of the input or when run returns false. At the end of a script, a
// last statement without ; runs too; interactive input drops it.
func (s *shell) feed(in lineReader, interactive bool, run func(text string, line int, meta bool) bool) error {
	pending, entry := "", ""
	lineNo, startLine := 0, 0
	mode, bang := inCode, false
	for {
		prompt := ""
		if interactive {
			prompt = s.prompt(pending != "", mode)
		}
		line, err := in.ReadLine(prompt)
		switch {
		case errors.Is(err, errInterrupted):
			pending, entry, mode, bang = "", "", inCode, false
			continue
		case errors.Is(err, io.EOF):
			if interactive {
				fmt.Fprintln(s.out)
				return nil
			}
			if segs, _, _ := scanScript(pending); segs[0].code {
				if mode != inCode || bang {
					return fmt.Errorf("the input ends inside %s", openWhat(mode, bang))
				}
				run(strings.TrimSpace(pending), startLine, false)
			}
			return nil
		case err != nil:
			return err
		}
		lineNo++
		if pending == "" {
			t := strings.TrimSpace(line)
			if t == "" {
				continue
			}
			if interactive {
				if cmd, ok := bareCommand(t); ok {
					in.AddHistory(t)
					t = cmd
				} else if t[0] == '\\' || t[0] == '.' {
					in.AddHistory(t)
				}
			}
			if t[0] == '\\' || t[0] == '.' {
				if !run(t, lineNo, true) {
					return nil
				}
				continue
			}
			startLine = lineNo
		}
		pending += line + "\n"
		entry = strings.TrimSpace(entry + " " + strings.TrimSpace(line))
		var segs []segment
		segs, mode, bang = scanScript(pending)
		for _, seg := range segs[:len(segs)-1] {
			if !seg.code {
				continue
			}
			text := pending[seg.start:seg.end]
			at := startLine + strings.Count(pending[:seg.start+len(text)-len(strings.TrimLeft(text, " \t\r\n\f\v"))], "\n")
			if !run(strings.TrimSpace(text), at, false) {
				return nil
			}
		}
		last := segs[len(segs)-1]
		startLine += strings.Count(pending[:last.start], "\n")
		pending = pending[last.start:]
		if !last.code && mode == inCode && !bang {
			pending = "" // spaces and finished comments
		}
		if pending == "" && interactive && entry != "" {
			in.AddHistory(entry)
			entry = ""
		}
	}
}

// bareCommand returns the meta command of a word the interactive shell
// takes as one where a statement would start, as mysql and psql do.
func bareCommand(t string) (string, bool) {
	switch strings.TrimSuffix(strings.ToLower(t), ";") {
	case "quit", "exit":
		return `\q`, true
	case "help":
		return `\?`, true
	}
	return "", false
}

// openWhat names what is left open at the end of the input.
func openWhat(mode lexMode, bang bool) string {
	switch mode {
	case inSingle:
		return "a '…' string"
	case inDouble:
		return `a "…" string`
	case inBacktick:
		return "a `…` name"
	case inBlock:
		return "a /* … */ comment"
	}
	if bang {
		return "a /*! … */ comment"
	}
	return "a statement"
}

// prompt returns the prompt: the tenant, the catalog and the schema of the
// session, or, inside a statement, a continuation mark of the same width
// saying what is open ('>, ">, `>, /*>, or ->), as mysql does.
func (s *shell) prompt(cont bool, mode lexMode) string {
	base := "lakegate"
	if s.catalog != "" {
		base = s.catalog
		if s.schema != "" {
			base += "." + s.schema
		}
		if s.tenant != "" {
			base = s.tenant + " " + base
		}
	}
	base = printable(base)
	if !cont {
		return base + "> "
	}
	mark := "->"
	switch mode {
	case inSingle:
		mark = "'>"
	case inDouble:
		mark = `">`
	case inBacktick:
		mark = "`>"
	case inBlock:
		mark = "/*>"
	}
	return strings.Repeat(" ", max(len(base)+1-len(mark), 0)) + mark + " "
}

// metaCommand is one of the shell's commands.
type metaCommand struct {
	names []string // the \ form first, then the . forms
	args  string
	help  string
	run   func(s *shell, args []string) error
}

// metaCommands lists the shell's commands (set in init: help lists them).
var metaCommands []metaCommand

func init() {
	metaCommands = []metaCommand{
		{[]string{`\?`, `\h`, ".help"}, "", "list these commands", func(s *shell, _ []string) error {
			s.metaHelp()
			return nil
		}},
		{[]string{`\q`, ".quit", ".exit"}, "", "leave the shell (also Ctrl-D, quit, exit)", func(s *shell, _ []string) error {
			s.quit = true
			return nil
		}},
		{[]string{`\dt`, ".tables"}, "[PATTERN]", "list the tables of the current schema (SHOW TABLES [LIKE PATTERN])", func(s *shell, args []string) error {
			if len(args) > 0 {
				return s.exec("SHOW TABLES LIKE " + quoteString(args[0]))
			}
			return s.exec("SHOW TABLES")
		}},
		{[]string{`\dn`, ".schemas"}, "", "list the schemas of the catalog (SHOW SCHEMAS)", func(s *shell, _ []string) error {
			return s.exec("SHOW SCHEMAS")
		}},
		{[]string{`\d`, ".describe"}, "TABLE", "describe a table's columns (DESCRIBE TABLE)", func(s *shell, args []string) error {
			if len(args) == 0 {
				return s.exec("SHOW TABLES")
			}
			return s.exec("DESCRIBE " + quoteName(args[0]))
		}},
		{[]string{`\c`, ".catalog"}, "[CATALOG]", "show the session's catalog, or switch to CATALOG (and no schema)", func(s *shell, args []string) error {
			if len(args) == 0 {
				_, err := fmt.Fprintln(s.out, printable(s.catalog))
				return err
			}
			if err := s.setOptions(map[string]any{"catalog": args[0], "schema": ""}); err != nil {
				return err
			}
			return s.refresh()
		}},
		{[]string{`\set`, ".set"}, "[OPTION VALUE]", "show the session options, or set one (catalog, schema)", func(s *shell, args []string) error {
			switch len(args) {
			case 0:
				r, err := s.cl.GetSessionOptions(s.ctx, &flight.GetSessionOptionsRequest{})
				if err != nil {
					return err
				}
				opts := r.GetSessionOptions()
				for _, name := range sortedKeys(opts) {
					fmt.Fprintf(s.out, "%-8s %s\n", printable(name), printable(opts[name].GetStringValue()))
				}
				return nil
			case 2:
				if err := s.setOptions(map[string]any{args[0]: args[1]}); err != nil {
					return err
				}
				return s.refresh()
			}
			return errors.New(`usage: \set [OPTION VALUE]`)
		}},
		{[]string{`\format`, ".format", ".mode"}, "[FORMAT]", "show or set the output format: " + strings.Join(formats, ", "), func(s *shell, args []string) error {
			if len(args) == 0 {
				_, err := fmt.Fprintln(s.out, s.format)
				return err
			}
			w, err := writerFor(args[0], s.escapeFormulas && args[0] == "csv")
			if err != nil {
				return errors.New("the format must be one of " + strings.Join(formats, ", "))
			}
			s.format, s.write = args[0], w
			return nil
		}},
		{[]string{`\timing`, ".timer"}, "[on|off]", "show each statement's elapsed time, or not", func(s *shell, args []string) error {
			switch {
			case len(args) == 0:
				s.timing = !s.timing
			case args[0] == "on" || args[0] == "off":
				s.timing = args[0] == "on"
			default:
				return errors.New("timing is on or off")
			}
			state := "off"
			if s.timing {
				state = "on"
			}
			_, err := fmt.Fprintln(s.out, "timing is "+state)
			return err
		}},
		{[]string{`\i`, ".read"}, "FILE", "run the statements in FILE", func(s *shell, args []string) error {
			if len(args) != 1 {
				return errors.New(`usage: \i FILE`)
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			return s.runScript(textLines(f), args[0])
		}},
	}
}

// meta runs a meta command line.
func (s *shell) meta(line string) error {
	fields := strings.Fields(strings.TrimSuffix(strings.TrimSpace(line), ";"))
	if len(fields) == 0 {
		return nil
	}
	for _, c := range metaCommands {
		if slices.Contains(c.names, fields[0]) {
			return c.run(s, fields[1:])
		}
	}
	return fmt.Errorf(`unknown command %s: \? lists the commands`, printable(fields[0]))
}

func (s *shell) metaHelp() {
	fmt.Fprintln(s.out, "Statements end with ; and may span lines. USE SCHEMA switches the schema.")
	fmt.Fprintln(s.out, "Commands (\\ or . forms, at the start of a line):")
	for _, c := range metaCommands {
		writeWrapped(s.out, "  "+strings.TrimSpace(strings.Join(c.names, " ")+" "+c.args), c.help)
	}
}
