//! The baseline: a tonic server with the same runtime settings as recapd
//! that does no work beyond moving bytes. Broadcasts go through one `watch`
//! channel per topic, as recapd's per-chat fan-out does.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, RwLock};

use tokio::sync::watch;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::WatchStream;
use tonic::{Request, Response, Status};

use crate::bench_pb::bare_service_server::{BareService, BareServiceServer};
use crate::bench_pb::{BareReply, BareRequest, ListenRequest, TriggerReply, TriggerRequest};

type Topic = watch::Sender<Option<Arc<BareReply>>>;

#[derive(Default, Clone)]
struct Bare {
    topics: Arc<RwLock<HashMap<String, Topic>>>,
    payloads: Arc<RwLock<HashMap<u32, Vec<u8>>>>,
}

impl Bare {
    fn payload(&self, size: u32) -> Vec<u8> {
        if let Some(p) = self.payloads.read().unwrap().get(&size) {
            return p.clone();
        }
        let p = vec![b'x'; size as usize];
        self.payloads.write().unwrap().insert(size, p.clone());
        p
    }

    fn topic(&self, name: &str) -> Topic {
        if let Some(t) = self.topics.read().unwrap().get(name) {
            return t.clone();
        }
        self.topics
            .write()
            .unwrap()
            .entry(name.to_owned())
            .or_insert_with(|| watch::Sender::new(None))
            .clone()
    }
}

type ListenStream =
    std::pin::Pin<Box<dyn tokio_stream::Stream<Item = Result<BareReply, Status>> + Send>>;

#[tonic::async_trait]
impl BareService for Bare {
    async fn unary(&self, request: Request<BareRequest>) -> Result<Response<BareReply>, Status> {
        let size = request.into_inner().reply_bytes;
        Ok(Response::new(BareReply {
            payload: self.payload(size),
            topic: String::new(),
            sent_at: None,
        }))
    }

    type ListenStream = ListenStream;

    async fn listen(
        &self,
        request: Request<ListenRequest>,
    ) -> Result<Response<ListenStream>, Status> {
        let topic = self.topic(&request.into_inner().topic);
        let stream = WatchStream::from_changes(topic.subscribe())
            .filter_map(|latest| latest.map(|reply| Ok((*reply).clone())));
        Ok(Response::new(Box::pin(stream)))
    }

    async fn trigger(
        &self,
        request: Request<TriggerRequest>,
    ) -> Result<Response<TriggerReply>, Status> {
        let TriggerRequest {
            topic,
            payload_bytes,
        } = request.into_inner();
        let sender = self.topic(&topic);
        let reply = BareReply {
            payload: self.payload(payload_bytes),
            topic,
            sent_at: Some(prost_types::Timestamp::from(std::time::SystemTime::now())),
        };
        sender.send_replace(Some(Arc::new(reply)));
        Ok(Response::new(TriggerReply {
            listeners: sender.receiver_count() as u32,
        }))
    }
}

pub async fn serve(listen: SocketAddr) -> Result<(), Box<dyn std::error::Error>> {
    eprintln!("bare server on {listen}");
    tonic::transport::Server::builder()
        .add_service(BareServiceServer::new(Bare::default()))
        .serve_with_shutdown(listen, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
