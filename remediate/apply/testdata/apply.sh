M='KAUDIT_000000000000000000000001'
KDIR='/var/lib/kaudit'
RUNS='/var/lib/kaudit/runs'
RUNID='20260102T030405Z-1a2b3c4d'
OPERATOR='unknown'
KPID='0'
KPSTART='0'
TTL='300'
LOCKWAIT='10'
TAKEOVER='-'
RUN='/var/lib/kaudit/runs/20260102T030405Z-1a2b3c4d'
ETHTOOL='0'
FILES='0	/opt/kafka/config/server.properties	present	fe3209d6d4f51935b391288a43df48d9ddece1a992597ae53387ca16611a9179	-	0d9807e9257ed76ebe0619555b6f7ddb0a665b3be18bf29d32c7dbf9bc39c698	IyBpdCdzICRIT01FIGBpZGAgJChyZWJvb3QpCmE9MQpzb2NrZXQubGlzdGVuLmJhY2tsb2cuc2l6ZT00MDk2Cg==
1	/etc/sysctl.d/99-kaudit.conf	absent	-	0644	f36b9fc912c26c61c3e24dc759130032c68cf32cee22e5d4e3ade65ad4e56d43	bmV0LmNvcmUuc29tYXhjb25uID0gNDA5Ngo=
'
VALUES='sysctl-0	sysctl	net.core.somaxconn	sysctl	/proc/sys/net/core/somaxconn	-	-	128	4096
sysctl-1	sysctl	net.ipv4.tcp_rmem	sysctl	/proc/sys/net/ipv4/tcp_rmem	-	-	4096 131072 6291456	4096 87380 134217728
'
UNITS=''
# [embedded: internal/remote.SayFunc]
# [embedded: remediate/apply/sh/lib.sh]
# [embedded: remediate/apply/sh/apply.sh]
