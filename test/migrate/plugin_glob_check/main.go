// Command plugin_glob_check runs squat/generic-device-plugin's own path lookup on the cases that liken-dra's
// migration reproduces (test/migrate/testdata/plugin_glob_cases.tsv) and fails on any case whose outcome differs.
// Test infrastructure only: test/migrate/plugin_glob_check.sh builds it inside the plugin's source tree, whose
// absolute.FS (over os.DirFS) and fs.Glob are what the plugin's discoverPath calls.
//
// Usage: plugin_glob_check CASES.tsv
package main

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/squat/generic-device-plugin/absolute"
)

type testCase struct {
	line             int
	pattern, path    string
	want, difference string
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: plugin_glob_check CASES.tsv")
		os.Exit(2)
	}
	cases, err := readCases(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	root, err := os.MkdirTemp("", "plugin-glob-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer os.RemoveAll(root)
	// Every path of every case exists, as the plugin would see it on a node.
	for _, c := range cases {
		full := filepath.Join(root, c.path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if _, err := os.Stat(full); err != nil {
			if err := os.WriteFile(full, nil, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
		}
	}
	// As the plugin builds its file system (deviceplugin/generic.go), rooted in the made-up tree.
	fsys := absolute.New(os.DirFS(root), "/")
	failed := 0
	for _, c := range cases {
		matches, err := fs.Glob(fsys, c.pattern)
		got := "no"
		if err != nil {
			got = "error"
		} else {
			for _, m := range matches {
				if m == c.path {
					got = "match"
				}
			}
		}
		if got != c.want {
			failed++
			fmt.Printf("line %d: the plugin's glob of %q gives %s for %s (matches %q, error %v); the cases say %s (%s)\n",
				c.line, c.pattern, got, c.path, matches, err, c.want, c.difference)
		}
	}
	fmt.Printf("%d of %d cases as the plugin matches\n", len(cases)-failed, len(cases))
	if failed > 0 {
		os.Exit(1)
	}
}

func readCases(name string) ([]testCase, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cases []testCase
	scanner := bufio.NewScanner(f)
	for line := 1; scanner.Scan(); line++ {
		text := scanner.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, "\t")
		if len(fields) != 4 {
			return nil, fmt.Errorf("%s:%d: want 4 tab-separated fields, got %d", name, line, len(fields))
		}
		cases = append(cases, testCase{line, fields[0], fields[1], fields[2], fields[3]})
	}
	return cases, scanner.Err()
}
