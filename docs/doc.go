// Package docs holds kaudit's generated documentation assets: docs/demo is
// the demo fleet's report in every format (regenerate with
// `sh docs/generate.sh`), and browser_test.go (build tag browser) opens
// HTML reports in headless Chromium:
//
//	go test -tags browser ./docs/
package docs
