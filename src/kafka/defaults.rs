//! Defaults kreplicate gives the clients where librdkafka's serve a copy badly, each one the
//! user's properties may change: the target's codec and the client id.

use rdkafka::config::ClientConfig;

use crate::options::ClusterSpec;
use crate::shard::Shard;

/// The `client.id` every client takes unless the user's properties set one.
pub(super) const CLIENT_ID: &str = "kreplicate";

/// The copy's own consumer and producer: [`CLIENT_ID`], the named flow they copy and the
/// shard they serve where there are, so a broker tells flows and the processes of one copy
/// apart: `kreplicate[.FLOW][.shard-i-of-n]`.
pub(super) fn copy_client_id(c: &mut ClientConfig, shard: Option<Shard>, flow: Option<&str>) {
    let id = match flow {
        Some(flow) => format!("{CLIENT_ID}.{flow}"),
        None => CLIENT_ID.to_string(),
    };
    // The shard part is named as the shard's transactional id is.
    let id = match shard {
        Some(shard) => shard.transactional_id(&id),
        None => id,
    };
    c.set("client.id", id);
}

/// The codec the target producer compresses batches with unless the user's properties name one.
/// librdkafka's own default is none, and a consumer is not told a source batch's codec, so a
/// copy of a compressed topic grew 100-fold on the target. zstd, measured against lz4
/// (bench/README.md, Compression): as small as a zstd source, 0.57 × lz4's bytes, for up to a
/// third more of the copier's CPU.
pub(super) const DEFAULT_COMPRESSION: &str = "zstd";

/// librdkafka's two names for the producer's codec (`compression.codec` is the alias).
const COMPRESSION_KEYS: [&str; 2] = ["compression.type", "compression.codec"];

/// The codec a copy to `target` compresses with, and whether the user's properties chose it
/// (the last value the properties give under either name).
pub fn compression(target: &ClusterSpec) -> (String, bool) {
    match target
        .properties
        .iter()
        .rev()
        .find(|(k, _)| COMPRESSION_KEYS.contains(&k.as_str()))
    {
        Some((_, v)) => (v.trim().to_string(), true),
        None => (DEFAULT_COMPRESSION.to_string(), false),
    }
}

/// Sets the default codec when the user's properties name none: a default under one of
/// librdkafka's names beside the user's value under the other would leave the choice to the
/// order librdkafka happens to apply them in.
pub(super) fn default_compression(c: &mut ClientConfig, target: &ClusterSpec) {
    if let (codec, false) = compression(target) {
        c.set("compression.type", codec);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{apply_cluster, spec};
    use super::*;

    #[test]
    fn issue_35_the_producer_compresses_unless_the_user_names_a_codec() {
        let codec = |props: &[(&str, &str)]| {
            let target = spec(props);
            let mut c = ClientConfig::new();
            default_compression(&mut c, &target);
            apply_cluster(&mut c, &target);
            let get = |k| c.get(k).map(String::from);
            (
                get("compression.type"),
                get("compression.codec"),
                compression(&target),
            )
        };
        let default = DEFAULT_COMPRESSION.to_string();
        assert_eq!(codec(&[]), (Some(default.clone()), None, (default, false)));
        // The user's value wins, under either of librdkafka's names.
        let none = ("none".to_string(), true);
        assert_eq!(
            codec(&[("compression.type", "none")]),
            (Some("none".into()), None, none)
        );
        let lz4 = ("lz4".to_string(), true);
        assert_eq!(
            codec(&[("compression.codec", "lz4")]),
            (None, Some("lz4".into()), lz4)
        );
    }

    #[test]
    fn issue_35_every_client_says_it_is_kreplicate_unless_the_user_names_it() {
        let id = |props: &[(&str, &str)]| {
            let mut c = ClientConfig::new();
            apply_cluster(&mut c, &spec(props));
            c.get("client.id").map(String::from)
        };
        assert_eq!(id(&[]).as_deref(), Some(CLIENT_ID));
        assert_eq!(id(&[("client.id", "mine")]).as_deref(), Some("mine"));
        // The copy's clients name their shard; the user's value still wins.
        let copy = |props: &[(&str, &str)], flow: Option<&str>| {
            let mut c = ClientConfig::new();
            copy_client_id(&mut c, Shard::parse("2/3").ok(), flow);
            apply_cluster(&mut c, &spec(props));
            c.get("client.id").map(String::from)
        };
        assert_eq!(copy(&[], None).as_deref(), Some("kreplicate.shard-2-of-3"));
        assert_eq!(
            copy(&[("client.id", "mine")], None).as_deref(),
            Some("mine")
        );
        // And the named flow they copy.
        assert_eq!(
            copy(&[], Some("orders-dr")).as_deref(),
            Some("kreplicate.orders-dr.shard-2-of-3")
        );
    }
}
