package sshconfig

// known lists every keyword of OpenSSH 9.x's ssh_config (plus the GSSAPI
// ones Debian and Red Hat patch in, and the deprecated ones OpenSSH still
// accepts). kaudit uses the few in Host; the rest are accepted and ignored.
// A keyword outside this list gets one warning and is ignored (OpenSSH
// rejects it unless IgnoreUnknown names it; a newer OpenSSH may know it).
var known = setOf(
	"host", "match", "include", "ignoreunknown",
	"addkeystoagent", "addressfamily", "batchmode", "bindaddress", "bindinterface",
	"canonicaldomains", "canonicalizefallbacklocal", "canonicalizehostname",
	"canonicalizemaxdots", "canonicalizepermittedcnames", "casignaturealgorithms",
	"certificatefile", "channeltimeout", "checkhostip", "ciphers", "clearallforwardings",
	"compression", "connectionattempts", "connecttimeout", "controlmaster",
	"controlpath", "controlpersist", "dynamicforward", "enableescapecommandline",
	"enablesshkeysign", "escapechar", "exitonforwardfailure", "fingerprinthash",
	"forkafterauthentication", "forwardagent", "forwardx11", "forwardx11timeout",
	"forwardx11trusted", "gatewayports", "globalknownhostsfile",
	"gssapiauthentication", "gssapidelegatecredentials", "gssapikeyexchange",
	"gssapiclientidentity", "gssapiserveridentity", "gssapirenewalforcesrekey",
	"gssapitrustdns", "gssapikexalgorithms", "hashknownhosts",
	"hostbasedacceptedalgorithms", "hostbasedauthentication", "hostbasedkeytypes",
	"hostkeyalgorithms", "hostkeyalias", "hostname", "identitiesonly",
	"identityagent", "identityfile", "ipqos", "kbdinteractiveauthentication",
	"kbdinteractivedevices", "kexalgorithms", "knownhostscommand", "localcommand",
	"localforward", "loglevel", "logverbose", "macs", "nohostauthenticationforlocalhost",
	"numberofpasswordprompts", "obscurekeystroketiming", "passwordauthentication",
	"permitlocalcommand", "permitremoteopen", "pkcs11provider", "port",
	"preferredauthentications", "proxycommand", "proxyjump", "proxyusefdpass",
	"pubkeyacceptedalgorithms", "pubkeyacceptedkeytypes", "pubkeyauthentication",
	"refuseconnection", "rekeylimit", "remotecommand", "remoteforward", "requesttty",
	"requiredrsasize", "revokedhostkeys", "securitykeyprovider", "sendenv",
	"serveralivecountmax", "serveraliveinterval", "sessiontype", "setenv", "stdinnull",
	"streamlocalbindmask", "streamlocalbindunlink", "stricthostkeychecking",
	"syslogfacility", "tag", "tcpkeepalive", "tunnel", "tunneldevice", "updatehostkeys",
	"usekeychain", "user", "userknownhostsfile", "verifyhostkeydns", "visualhostkey",
	"warnweakcrypto", "xauthlocation",
	// deprecated or unsupported in OpenSSH, still accepted by it
	"afstokenpassing", "challengeresponseauthentication", "cipher", "compressionlevel",
	"dsaauthentication", "fallbacktorsh", "globalknownhostsfile2", "kerberosauthentication",
	"kerberostgtpassing", "protocol", "rhostsauthentication", "rhostsrsaauthentication",
	"rsaauthentication", "skeyauthentication", "smartcarddevice", "tisauthentication",
	"useprivilegedport", "useroaming", "usersh", "userknownhostsfile2",
	"gssapiclientidentity",
)

// accumulating keywords add every value obtained instead of keeping the first.
var accumulating = setOf("identityfile", "certificatefile")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
