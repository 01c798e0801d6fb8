// Package discover asks a Kafka cluster for its brokers and their running
// settings, with franz-go: it is the one place in kaudit that speaks the
// Kafka protocol. Metadata says which brokers the cluster has (node id,
// advertised host and port, rack), its cluster id and controller; a
// DescribeConfigs on each broker says what the running broker uses for the
// settings kaudit checks, and where that value came from (the broker's
// file, a dynamic config, Kafka's default).
//
// A Metadata response lists the brokers as advertised on the listener the
// request arrived on (Kafka's KafkaApis.handleTopicMetadataRequest): the
// names may be a load balancer's or NAT's, which is why a broker is only
// ever matched to an SSH host and then proven by its meta.properties, never
// assumed.
package discover
