//! The records tests produce ([`Rec`]) and read back ([`Got`]).

/// A record to produce. `partition < 0` lets the partitioner choose; `timestamp: None` lets the
/// client stamp the current time (CreateTime).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rec {
    pub partition: i32,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
    pub timestamp: Option<i64>,
}

impl Rec {
    /// Record with UTF-8 key and value on `partition`, no headers, client timestamp.
    pub fn kv(partition: i32, key: &str, value: &str) -> Rec {
        Rec {
            partition,
            key: Some(key.as_bytes().to_vec()),
            value: Some(value.as_bytes().to_vec()),
            ..Rec::default()
        }
    }
}

/// A record read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Got {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
    /// Milliseconds; None when the record carries no timestamp.
    pub timestamp: Option<i64>,
}

impl Got {
    /// The fields a producer controls, for comparing with what was produced.
    pub fn to_rec(&self) -> Rec {
        Rec {
            partition: self.partition,
            key: self.key.clone(),
            value: self.value.clone(),
            headers: self.headers.clone(),
            timestamp: self.timestamp,
        }
    }
}
