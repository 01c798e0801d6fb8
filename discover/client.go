package discover

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"

	"github.com/kaudit/kaudit/audit/parse"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/redact"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// ClientConfig is how kaudit connects, as a Kafka client's settings say
// it. Secrets come from a file or an environment variable, never from a
// command-line argument (which any user of the host can read in ps).
type ClientConfig struct {
	Protocol     string // security.protocol: PLAINTEXT (default), SSL, SASL_PLAINTEXT, SASL_SSL
	Mechanism    string // sasl.mechanism: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
	User         string
	PasswordEnv  string // the environment variable holding the password
	PasswordFile string
	password     string // from a --command-config file's sasl.jaas.config
	CAFile       string // PEM: the CAs that sign the brokers' certificates
	CertFile     string // PEM client certificate (mutual TLS)
	KeyFile      string // PEM client key; may be CertFile itself
	ServerName   string // the name the brokers' certificates must carry; "" = the bootstrap host
}

// Options turns the configuration into discovery options.
func (c ClientConfig) Options(bootstrap []string) (Options, error) {
	o := Options{Bootstrap: bootstrap}
	if err := CheckBootstrap(bootstrap); err != nil {
		return o, err
	}
	proto := cmp.Or(strings.ToUpper(c.Protocol), "PLAINTEXT")
	switch proto {
	case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
	default:
		return o, fmt.Errorf("security.protocol %s: want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", redact.Excerpt(c.Protocol))
	}
	if strings.HasSuffix(proto, "SSL") {
		t, err := c.tlsConfig()
		if err != nil {
			return o, err
		}
		o.TLS = t
	}
	if strings.HasPrefix(proto, "SASL") {
		m, err := c.mechanism()
		if err != nil {
			return o, err
		}
		o.SASL = m
	}
	return o, nil
}

// envName is the name of an environment variable as a shell exports it.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// secret reads the SASL password. Its errors never repeat what
// --sasl-password-env or a missing --sasl-password-file was given: a
// person who typed the password there would see it echoed, and logged.
func (c ClientConfig) secret() (string, error) {
	switch {
	case c.PasswordEnv != "":
		if !envName.MatchString(c.PasswordEnv) {
			return "", located.Hint(errors.New("--sasl-password-env takes the NAME of an environment variable, and what it was given is not a name (not shown: it may be the password itself)"),
				"put the password in a variable (read -rs KAFKA_PASSWORD; export KAFKA_PASSWORD) and give --sasl-password-env KAFKA_PASSWORD")
		}
		v, ok := os.LookupEnv(c.PasswordEnv)
		if !ok {
			return "", located.Hint(errors.New("the variable --sasl-password-env names is not set in kaudit's environment (its name is not shown: it may be the password itself)"),
				"export the variable before running kaudit (sudo drops the environment unless told to keep it: sudo --preserve-env=NAME)")
		}
		return v, nil
	case c.PasswordFile != "":
		b, err := os.ReadFile(c.PasswordFile)
		if errors.Is(err, fs.ErrNotExist) {
			return "", located.Hint(errors.New("the file --sasl-password-file names does not exist (its path is not shown: it may be the password itself)"),
				"give the path of a file that holds the password (mode 0600), never the password")
		}
		if err != nil {
			return "", fmt.Errorf("password file: %w", err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	case c.password != "":
		return c.password, nil
	}
	return "", located.Hint(errors.New("SASL needs a password"), "give --sasl-password-file FILE or --sasl-password-env VAR (never on the command line)")
}

func (c ClientConfig) mechanism() (sasl.Mechanism, error) {
	if c.User == "" {
		return nil, errors.New("SASL needs a user name (--sasl-user, or username=\"…\" in sasl.jaas.config)")
	}
	pass, err := c.secret()
	if err != nil {
		return nil, err
	}
	switch strings.ToUpper(c.Mechanism) {
	case "PLAIN":
		return plain.Auth{User: c.User, Pass: pass}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: c.User, Pass: pass}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: c.User, Pass: pass}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("sasl.mechanism %s: kaudit speaks PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512", redact.Excerpt(c.Mechanism))
}

func (c ClientConfig) tlsConfig() (*tls.Config, error) {
	t := &tls.Config{ServerName: c.ServerName, MinVersion: tls.VersionTLS12}
	if c.CAFile != "" {
		b, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("CA file %s holds no PEM certificate", c.CAFile)
		}
		t.RootCAs = pool
	}
	if c.CertFile != "" || c.KeyFile != "" {
		key := cmp.Or(c.KeyFile, c.CertFile)
		cert, err := tls.LoadX509KeyPair(c.CertFile, key)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	return t, nil
}

var jaasField = regexp.MustCompile(`\b(username|password)\s*=\s*"((?:[^"\\]|\\.)*)"`)

// ReadCommandConfig reads a Kafka CLI client.properties (what
// --command-config takes) the way the Kafka tools read it: security.protocol,
// sasl.mechanism, sasl.jaas.config (username and password), and the PEM
// truststore and keystore (ssl.truststore.type=PEM, ssl.keystore.type=PEM).
// A JKS or PKCS12 store is refused with the command that converts it.
func ReadCommandConfig(path string) (ClientConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return ClientConfig{}, fmt.Errorf("command config: %w", err)
	}
	p, _ := parse.Properties(string(b))
	for k, v := range p { // a continuation can join a password's line to any value; only sasl.jaas.config is read for one
		if k != "sasl.jaas.config" {
			p[k] = redact.Text(v)
		}
	}
	c := ClientConfig{Protocol: p["security.protocol"], Mechanism: p["sasl.mechanism"]}
	if c.Mechanism == "" {
		c.Mechanism = "GSSAPI" // Kafka's default, refused by mechanism()
		if _, ok := p["sasl.jaas.config"]; ok {
			c.Mechanism = "PLAIN"
		}
	}
	for _, m := range jaasField.FindAllStringSubmatch(p["sasl.jaas.config"], -1) {
		v := strings.ReplaceAll(m[2], `\"`, `"`)
		if m[1] == "username" {
			c.User = v
		} else {
			c.password = v
		}
	}
	if loc := p["ssl.truststore.location"]; loc != "" {
		if err := pemStore(path, "truststore", p["ssl.truststore.type"], loc); err != nil {
			return c, err
		}
		c.CAFile = loc
	}
	if loc := p["ssl.keystore.location"]; loc != "" {
		if err := pemStore(path, "keystore", p["ssl.keystore.type"], loc); err != nil {
			return c, err
		}
		c.CertFile, c.KeyFile = loc, loc
	}
	return c, nil
}

// pemStore refuses a store Go's crypto/tls cannot read (it reads PEM
// only), with the commands that convert it.
func pemStore(cfg, which, typ, loc string) error {
	t := cmp.Or(strings.ToUpper(typ), "JKS") // Kafka's default ssl.*store.type
	if t == "PEM" {
		return nil
	}
	p12 := loc
	var steps []string
	if t == "JKS" {
		p12 = strings.TrimSuffix(loc, ".jks") + ".p12"
		steps = append(steps, fmt.Sprintf("keytool -importkeystore -srckeystore %s -srcstoretype JKS -destkeystore %s -deststoretype PKCS12", loc, p12))
	} else if t != "PKCS12" {
		return fmt.Errorf("%s: ssl.%s.type %s: kaudit reads PEM stores only", cfg, which, typ)
	}
	pem := strings.TrimSuffix(strings.TrimSuffix(p12, ".p12"), ".pfx") + ".pem"
	if which == "truststore" {
		steps = append(steps, fmt.Sprintf("openssl pkcs12 -in %s -nokeys -out %s", p12, pem))
	} else {
		steps = append(steps, fmt.Sprintf("openssl pkcs12 -in %s -nodes -out %s", p12, pem))
	}
	return fmt.Errorf("%s: ssl.%s.type is %s, and kaudit reads PEM only: convert it with\n  %s\nthen set ssl.%s.type=PEM and ssl.%s.location=%s", cfg, which, t, strings.Join(steps, "\n  "), which, which, pem)
}
