// Command ctxsel decides how much, and which, retrieved context to hand an
// LLM. Run `ctxsel help` for the commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/all" // every registered name
	"github.com/ctxsel/ctxsel/internal/termtext"
)

const usage = `ctxsel decides how much, and which, retrieved context to hand an LLM.

Usage:
  ctxsel ask [flags] "Q"     answer from your indexed documents: passages, why the cut, prompt, answer
  ctxsel eval [flags]        measure strategies on labelled data (default: the bundled sample)
  ctxsel estimate-length     estimate the retrieval length for RAG summarisation (silver references, no gold)
  ctxsel export grpo [flags] write picker training data for verl (parquet) or TRL (JSONL) from mined records
  ctxsel index SUBCOMMAND    add, sync, rm, ls, stats, verify, repair: index your documents
  ctxsel mine [flags]        mine minimal sufficient evidence sets (Context-Picker) with a generator and a judge
  ctxsel select [flags]      select from candidates given as JSON lines on stdin
  ctxsel serve [flags]       run the HTTP selection service and its web page
  ctxsel strategies          list strategies and their parameters
  ctxsel train band [flags]  train the learned band selector (LDAR) on labelled data
  ctxsel train evidence      fit the evidence selector's sentence model on labelled data
  ctxsel mcp [flags]         MCP server over stdio: select_context, search, ask, strategies
  ctxsel version             module version, VCS revision, Go version (also --version)
  ctxsel help [command]      show help

Run 'ctxsel COMMAND -h' for a command's flags.

Exit codes: 0 ok, 1 failure (also a damaged index), 2 usage error (bad flags,
bad strategy, bad input), 3 partly done (index add: some files could not be
indexed and were skipped, each named in a note; everything else was indexed).
`

// usageError marks errors that are the caller's to fix (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// partialError marks a command that did its work except for the parts it
// named in notes (exit code 3).
type partialError struct{ err error }

func (e partialError) Error() string { return e.err.Error() }
func (e partialError) Unwrap() error { return e.err }

func main() {
	ctx, stop := signalContext()
	defer stop()
	// Notes that libraries send to the default logger (slog.Warn: the
	// embedding cache's) get run's escapes too.
	log.SetOutput(termtext.NewWriter(os.Stderr))
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// signalContext is cancelled by the first SIGINT or SIGTERM, which asks the
// command to stop cleanly (index add keeps what it committed and releases
// its locks); the signals' default action is then restored, so a second one
// ends the process at once.
func signalContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// run runs one command with everything it prints passed through termtext:
// text from documents, LLMs and indexes cannot drive the terminal (JSON
// output keeps its value; see docs/hardening.md). ctxsel mcp's stdout is
// its protocol and gets the bytes as they are.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out, errs := termtext.NewWriter(stdout), termtext.NewWriter(stderr)
	defer out.Flush()
	defer errs.Flush()
	return runCommand(ctx, args, stdin, stdout, out, errs)
}

// runCommand runs the command args name; raw is stdout without escapes.
func runCommand(ctx context.Context, args []string, stdin io.Reader, raw, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "ask":
		err = cmdAsk(ctx, rest, stdout, stderr)
	case "eval":
		err = cmdEval(ctx, rest, stdout, stderr)
	case "estimate-length":
		err = cmdEstimateLength(ctx, rest, stdout, stderr)
	case "index":
		err = cmdIndex(ctx, rest, stdout, stderr)
	case "export":
		err = cmdExport(rest, stdout, stderr)
	case "mcp":
		err = cmdMCP(ctx, rest, stdin, raw, stderr)
	case "mine":
		err = cmdMine(ctx, rest, stdout, stderr)
	case "select":
		err = cmdSelect(ctx, rest, stdin, stdout, stderr)
	case "serve":
		err = cmdServe(ctx, rest, stdout, stderr)
	case "strategies":
		err = cmdStrategies(rest, stdout, stderr)
	case "train":
		err = cmdTrain(ctx, rest, stdout, stderr)
	case "version", "-version", "--version":
		err = cmdVersion(rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 {
			return runCommand(ctx, []string{rest[0], "-h"}, stdin, raw, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "ctxsel: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(partialError)):
		fmt.Fprintf(stderr, "ctxsel: %v\n", err)
		return 3
	case errors.As(err, new(usageError)), errors.Is(err, ctxsel.ErrInvalidInput):
		fmt.Fprintf(stderr, "ctxsel: %v\n", err)
		return 2
	default:
		fmt.Fprintf(stderr, "ctxsel: %v\n", err)
		return 1
	}
}

// flagSetRecorder is an error writer that also takes the flag set a command
// builds: run with "-h" and one of these as stderr hands back the command's
// real flags without running it (the documented commands are checked so).
type flagSetRecorder interface {
	io.Writer
	recordFlagSet(*flag.FlagSet)
}

// newFlags makes a flag set that reports errors instead of exiting.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if r, ok := termtext.Underlying(stderr).(flagSetRecorder); ok {
		r.recordFlagSet(fs)
	}
	fs.Usage = func() {
		fmt.Fprintln(stderr, synopsis)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags { // no empty "Flags:" for a command without any
			fmt.Fprint(stderr, "\nFlags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))}
	}
	return nil
}
