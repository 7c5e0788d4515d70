//! Injections served in their cached wire form (issue 33): an injection is
//! encoded once per revision, the first time it is served, and every
//! `GetInjection`, `Refresh` and `Subscribe` delivery of that revision
//! copies those bytes instead of converting and encoding again.
//!
//! `build.rs` generates `InjectionService`'s server with [`InjectionCodec`]
//! for the methods answering an `Injection`, so they answer a
//! [`WireInjection`]. The bytes are exactly `pb::Injection::from(&injection)`
//! encoded: the wire does not change, and clients decode `pb::Injection`.

use std::marker::PhantomData;
use std::sync::Arc;

use bytes::BufMut;
use prost::Message;
use tonic::Status;
use tonic::codec::{BufferSettings, Codec, EncodeBuf, Encoder};
use tonic_prost::ProstDecoder;

use super::pb;
use crate::domain::refresh::Injection;

/// An injection to answer with: the shared domain value, written as its
/// cached encoding.
#[derive(Debug, Clone)]
pub struct WireInjection(pub Arc<Injection>);

impl WireInjection {
    /// The injection's protobuf encoding (a `pb::Injection`), made on the
    /// first call for this value and kept in [`Injection::encoded`].
    pub fn bytes(&self) -> &[u8] {
        encoded(&self.0)
    }
}

/// `injection`'s protobuf encoding, made once and kept beside it. Debug
/// builds (the tests) check that the bytes kept are still the injection's.
fn encoded(injection: &Injection) -> &[u8] {
    let bytes = injection
        .encoded
        .get_or_fill(|| pb::Injection::from(injection).encode_to_vec());
    debug_assert_eq!(
        bytes,
        pb::Injection::from(injection).encode_to_vec(),
        "an injection changed after it was encoded"
    );
    bytes
}

/// The codec of the `InjectionService` methods answering an injection:
/// requests `U` are decoded by prost, answers written from their cache.
#[derive(Debug, Clone, Copy)]
pub struct InjectionCodec<U>(PhantomData<U>);

impl<U> Default for InjectionCodec<U> {
    fn default() -> Self {
        InjectionCodec(PhantomData)
    }
}

impl<U: Message + Default + Send + 'static> Codec for InjectionCodec<U> {
    type Encode = WireInjection;
    type Decode = U;
    type Encoder = InjectionEncoder;
    type Decoder = ProstDecoder<U>;

    fn encoder(&mut self) -> InjectionEncoder {
        InjectionEncoder
    }

    fn decoder(&mut self) -> ProstDecoder<U> {
        ProstDecoder::new(BufferSettings::default())
    }
}

/// Writes a [`WireInjection`]'s cached bytes into the message buffer.
#[derive(Debug, Clone, Copy, Default)]
pub struct InjectionEncoder;

impl Encoder for InjectionEncoder {
    type Item = WireInjection;
    type Error = Status;

    fn encode(&mut self, item: WireInjection, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(item.bytes());
        Ok(())
    }
}

#[cfg(test)]
#[path = "wire/tests.rs"]
mod tests;
