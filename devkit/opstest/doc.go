// Package opstest holds the tests of what an operator and a merchant use, against a
// running standalone system (devkit/standalone): the metrics that deploy/'s dashboard and
// alert rules name, a real Prometheus scraping a sale and alerting on injected drift, and
// the merchant console in headless Chromium; and that deploy/mysql's grants cover the
// schema the migrations make.
package opstest
