M='KAUDIT_000000000000000000000001'
LEASE='0'
ETHTOOL='0'
FILES='0	/etc/sysctl.d/99-kaudit.conf
1	/opt/kafka/config/server.properties
'
VALUES='sysctl-0	net.core.somaxconn	sysctl	/proc/sys/net/core/somaxconn	-	-
'
# [embedded: internal/remote.SayFunc]
# [embedded: remediate/apply/sh/lib.sh]
# [embedded: remediate/apply/sh/read.sh]
