//! Two tenants with books of the same name never see each other's.

use tonic::service::interceptor::InterceptedService;

use super::*;

const ACME: &str = "acme-token-0123456789";
const GLOBEX: &str = "globex-token-9876543210";

type Auth = Box<dyn FnMut(tonic::Request<()>) -> Result<tonic::Request<()>, Status> + Send>;
type Client = LorebookServiceClient<InterceptedService<Channel, Auth>>;

fn client(channel: &Channel, token: &'static str) -> Client {
    let auth: Auth = Box::new(move |mut request: tonic::Request<()>| {
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
        Ok(request)
    });
    LorebookServiceClient::with_interceptor(channel.clone(), auth)
}

async fn import_as(client: &mut Client, name: &str, json: &str) {
    client
        .import_lorebook(pb::ImportLorebookRequest {
            name: name.into(),
            json: json.into(),
        })
        .await
        .expect("imports");
}

async fn export_as(client: &mut Client, name: &str) -> Result<Value, Status> {
    client
        .export_lorebook(pb::ExportLorebookRequest { name: name.into() })
        .await
        .map(|r| json(&r.into_inner().json))
}

async fn names(client: &mut Client) -> Vec<String> {
    client
        .list_lorebooks(pb::ListLorebooksRequest::default())
        .await
        .expect("lists")
        .into_inner()
        .lorebooks
        .into_iter()
        .map(|b| b.name)
        .collect()
}

#[tokio::test]
async fn tenants_with_books_of_one_name_never_see_each_others() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, format!("acme {ACME}\nglobex {GLOBEX}\n")).unwrap();
    let mut config = test_config(dir.path().join("data"));
    config.auth_tokens_file = Some(tokens);
    config.lorebooks.max_lorebooks_per_tenant = 2;
    let server = Server::start_with(config).await;
    let mut acme = client(&server.channel, ACME);
    let mut globex = client(&server.channel, GLOBEX);

    let acme_book = r#"{"entries":{"0":{"content":"acme's secret"}}}"#;
    let globex_book = r#"{"entries":{"0":{"content":"globex's lore"},"1":{}}}"#;
    import_as(&mut acme, "World", acme_book).await;
    import_as(&mut acme, "Acme only", acme_book).await;
    import_as(&mut globex, "World", globex_book).await;
    assert_eq!(
        export_as(&mut acme, "World").await.unwrap(),
        json(acme_book)
    );
    assert_eq!(
        export_as(&mut globex, "World").await.unwrap(),
        json(globex_book)
    );
    assert_eq!(names(&mut acme).await, ["Acme only", "World"]);
    assert_eq!(names(&mut globex).await, ["World"]);
    // Each tenant's books count against its own limit only.
    import_as(&mut globex, "Second", globex_book).await;

    // Another tenant's book is not found, by every RPC.
    refused(
        export_as(&mut globex, "Acme only").await,
        Code::NotFound,
        &[],
    );
    refused(
        globex
            .get_lorebook_entry(pb::GetLorebookEntryRequest {
                name: "Acme only".into(),
                uid: "0".into(),
            })
            .await,
        Code::NotFound,
        &[],
    );
    refused(
        globex
            .put_lorebook_entry(pb::PutLorebookEntryRequest {
                name: "Acme only".into(),
                uid: "0".into(),
                fields: r#"{"content":"overwritten"}"#.into(),
            })
            .await,
        Code::NotFound,
        &[],
    );
    refused(
        globex
            .delete_lorebook(pb::DeleteLorebookRequest {
                name: "Acme only".into(),
            })
            .await,
        Code::NotFound,
        &[],
    );
    // One tenant's edits and deletions leave the other's book of that name.
    globex
        .put_lorebook_entry(pb::PutLorebookEntryRequest {
            name: "World".into(),
            uid: "0".into(),
            fields: r#"{"content":"changed"}"#.into(),
        })
        .await
        .unwrap();
    globex
        .delete_lorebook(pb::DeleteLorebookRequest {
            name: "World".into(),
        })
        .await
        .unwrap();
    assert_eq!(
        export_as(&mut acme, "World").await.unwrap(),
        json(acme_book)
    );
    assert_eq!(
        export_as(&mut acme, "Acme only").await.unwrap(),
        json(acme_book)
    );
    refused(export_as(&mut globex, "World").await, Code::NotFound, &[]);
    server.stop().await;
}
