// Package atomicfile is ctxsel's one place for durable file writes:
// replacing a file so that readers see either the old content or the whole
// new content (Write), creating a file that must not exist yet (WriteNew),
// and making a directory's new or renamed entries survive a crash
// (SyncDir). The index's manifest and segment files, the record logs'
// rebuilt files, reports and trained models are written through it.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// Write creates or replaces path (mode 0644) with what write produces: the
// data goes to a temporary file in the same directory (named
// ".<base>.<random>"), is synced, renamed into place, and the directory is
// synced. On any error the old file, if there was one, is left as it was.
func Write(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	fail := func(err error) error {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	// CreateTemp makes files private; these are ordinary files.
	if err := tmp.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := write(tmp); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// IsTemp reports whether name (a base name) is one of Write's temporary
// files for base: what a writer interrupted between creating and renaming
// it leaves behind.
func IsTemp(name, base string) bool {
	prefix := "." + base + "."
	return len(name) > len(prefix) && name[:len(prefix)] == prefix
}

// WriteNew creates path, which must not exist (an fs.ErrExist error if it
// does), writes data to it and fsyncs it; on any error the file is
// removed. The directory entry is not synced: a writer that publishes the
// file afterwards (a manifest naming it) syncs the directory once then.
func WriteNew(path string, data []byte) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Sync()
}

// SyncDir fsyncs directory dir so that entries created or renamed in it
// survive a crash. A file system or platform that cannot sync a directory
// (EINVAL, ENOTSUP, …; Windows) is not an error: the rename is then as
// durable as the system allows.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !unsupportedSync(err) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

func unsupportedSync(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EISDIR) ||
		errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
}
