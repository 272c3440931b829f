package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/peterh/liner"
)

// osConsole returns the console of this process: stdin, whether it is a
// terminal, the liner line editor and Ctrl-C routed through interrupts.
func osConsole() console {
	_, err := liner.TerminalMode() // fails unless stdin is a terminal
	return console{stdin: os.Stdin, terminal: err == nil, editor: newLineEditor, onInterrupt: interrupts.route}
}

// lineEditor is the interactive lineReader: github.com/peterh/liner
// (line editing, history with search, Ctrl-C drops the line). When stdout
// is not a terminal, lines are read plainly and prompts go to stderr.
type lineEditor struct {
	st       *liner.State
	history  string // file, "" for none
	fallback *plainReader
}

// newLineEditor puts the terminal in liner's mode and loads the history.
func newLineEditor() (lineReader, error) {
	e := &lineEditor{st: liner.NewLiner(), history: historyPath()}
	e.st.SetCtrlCAborts(true)
	e.st.SetMultiLineMode(true)
	if e.history != "" {
		if f, err := os.Open(e.history); err == nil {
			_, _ = e.st.ReadHistory(f)
			f.Close()
		}
	}
	return e, nil
}

// historyPath is $LAKEGATE_HISTORY (empty: keep no history) or
// ~/.lakegate_history.
func historyPath() string {
	if p, ok := os.LookupEnv("LAKEGATE_HISTORY"); ok {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".lakegate_history")
}

func (e *lineEditor) ReadLine(prompt string) (string, error) {
	if e.fallback != nil {
		return e.fallback.ReadLine(prompt)
	}
	line, err := e.st.Prompt(prompt)
	switch {
	case errors.Is(err, liner.ErrPromptAborted):
		return "", errInterrupted
	case errors.Is(err, liner.ErrNotTerminalOutput):
		e.fallback = &plainReader{r: bufio.NewReader(os.Stdin), w: os.Stderr}
		return e.fallback.ReadLine(prompt)
	}
	return line, err
}

func (e *lineEditor) AddHistory(entry string) { e.st.AppendHistory(entry) }

// Close restores the terminal and writes the history (mode 0600: it holds
// the statements typed, and the values in them).
func (e *lineEditor) Close() error {
	var err error
	if e.history != "" {
		var f *os.File
		if f, err = os.OpenFile(e.history, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600); err == nil {
			_, err = e.st.WriteHistory(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			err = fmt.Errorf("writing the history: %w", err)
		}
	}
	if cerr := e.st.Close(); err == nil {
		err = cerr
	}
	return err
}

// interrupts routes Ctrl-C (SIGINT, see main): by default it cancels the
// command; the interactive shell takes it over to cancel only the
// statement running.
var interrupts interruptRouter

type interruptRouter struct {
	mu      sync.Mutex
	handler func()
}

// route makes Ctrl-C call handler until restore is called.
func (r *interruptRouter) route(handler func()) (restore func()) {
	r.mu.Lock()
	prev := r.handler
	r.handler = handler
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		r.handler = prev
		r.mu.Unlock()
	}
}

// fire handles one Ctrl-C: the routed handler, or def.
func (r *interruptRouter) fire(def func()) {
	r.mu.Lock()
	h := r.handler
	r.mu.Unlock()
	if h == nil {
		h = def
	}
	h()
}
