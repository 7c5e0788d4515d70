//! A conversation in the shape of the public long-conversation dataset
//! LoCoMo (snap-research/locomo, the one issue 28's trial used): two
//! friends, four sessions days apart, 19 messages each (76 in all), each
//! session opening on the time that passed since the last. The text is
//! ours (the dataset's licence is non-commercial); only the shape is
//! LoCoMo's. The sessions' last messages (18, 37, 56) are the true scene
//! boundaries.

use recapd::grpc::pb;

/// The user's name.
pub const USER: &str = "Maya";
/// The character's name.
pub const CHAR: &str = "Theo";

/// The four sessions, each opened by Maya, speakers alternating.
const SESSIONS: [[&str; 19]; 4] = [
    [
        "Hi Theo! Long time no see. How was your week?",
        "Hey Maya! Busy. I finally signed up for the pottery class I kept talking about.",
        "No way! The one at the community centre on Elm Street?",
        "That one. Tuesdays at seven. My first bowl looked more like an ashtray.",
        "Ha, everyone starts there. I'm still planning the trip to Lisbon, by the way.",
        "When are you going?",
        "The second week of June. My sister Ana is coming with me.",
        "Lisbon in June sounds perfect. Have you booked a place to stay?",
        "A small flat in Alfama, near the castle. It has a balcony with a view of the river.",
        "Jealous. Will you try the custard tarts? Everyone says they're the best thing there.",
        "Ana already made a list of six bakeries. She takes food very seriously.",
        "Smart woman. Are you taking the tram up the hills?",
        "Tram 28, definitely. And a day trip to Sintra for the palaces.",
        "I went to Sintra years ago. Go early, the buses fill up by ten.",
        "Good tip, thanks. How is your dog doing, by the way? Is Biscuit still limping?",
        "Much better. The vet said it was just a sprain. He's chasing squirrels again.",
        "Glad to hear it. Give him a scratch behind the ears from me.",
        "Will do. I should go, pottery homework: I have to glaze that ashtray.",
        "Good luck with the glaze! Talk soon.",
    ],
    [
        "Theo! It's been ten days. Guess what happened.",
        "Tell me everything.",
        "I got the job at the library! Assistant archivist, starting next month.",
        "Maya, that's amazing! You've wanted that for two years.",
        "I know. The interview was terrifying. They asked me to date an old letter on the spot.",
        "How did you manage that?",
        "The paper had a watermark from a mill that closed in 1902, so it had to be older.",
        "That's brilliant detective work. What will you be doing there?",
        "Sorting the town's old maps and letters, and helping people trace their families.",
        "You're going to love it. Does it change the Lisbon trip?",
        "No, they agreed I can start after I come back in June.",
        "Perfect. We should celebrate. Dinner at that Thai place on Friday?",
        "Yes please. Can Jonah come too? He helped me practise for the interview.",
        "Of course. I haven't seen Jonah since his band played at the harbour festival.",
        "He's still playing drums. They're recording an album this summer.",
        "Tell him I want a signed copy.",
        "I will. Friday at eight then?",
        "Friday at eight. I'll book a table for three.",
        "See you then, and thank you for always cheering me on.",
    ],
    [
        "Hi Theo. Sorry I went quiet, it's been a rough two weeks.",
        "Hey, no need to apologise. What's going on?",
        "My landlord is selling the building, so I have to move out by the end of May.",
        "Oh no, right before Lisbon. Have you found anything?",
        "I saw a flat on Birch Road yesterday. It's small but it has a garden.",
        "A garden! You could finally grow the tomatoes you always talk about.",
        "That's exactly what I thought. The rent is a bit higher though.",
        "With the library job starting, can you manage it?",
        "Just about. I'd have to sell the old piano to pay for the movers.",
        "The piano your grandmother gave you? Are you sure?",
        "Nobody has played it in years, and it won't fit up the stairs anyway.",
        "Fair enough. I can help you move, I'll borrow my brother's van.",
        "You'd do that? Theo, you're the best.",
        "It's what friends are for. Biscuit can supervise.",
        "Ha! He'd just sleep on the boxes. I'll sign the lease on Monday.",
        "Let me know the moving date and I'll keep the weekend free.",
        "Probably the twentieth of May. I'll confirm once I have the keys.",
        "Sounds like a plan. Hang in there.",
        "Thanks. Talking to you always makes things feel smaller.",
    ],
    [
        "Theo! It's been three weeks. I'm writing from my new garden.",
        "You moved! How is the new place?",
        "Cosy. The tomatoes are already in the ground and the neighbours brought me a lemon tree.",
        "That's lovely. How did the move go after I left with the van?",
        "Fine, except the movers dropped a box of plates. Only two survived.",
        "Classic. I'll make you new ones in pottery class. I've moved on from ashtrays.",
        "You're making plates now? I'm impressed.",
        "Plates and a teapot, actually. My teacher says I have a steady hand.",
        "I'd love a teapot. Oh, and Lisbon is next week!",
        "Already? Are you packed?",
        "Ana is packed. I have a list and an empty suitcase.",
        "Don't forget the adapter for the plugs.",
        "Good point. Also, Jonah's band got a slot at the summer festival in July.",
        "That's huge for them. We should all go.",
        "Definitely. And the library sent my contract: I start on the first of July.",
        "So everything fits: Lisbon, then the festival, then the new job.",
        "It finally feels like things are falling into place.",
        "You deserve it. Send me a photo of the river from the balcony.",
        "I will. And you send me a photo of that teapot.",
    ],
];

/// The conversation as recapd messages, `m0`..`m75`, Maya the user.
pub fn messages() -> Vec<pb::Message> {
    SESSIONS
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, text)| {
            let is_user = i % 19 % 2 == 0;
            pb::Message {
                id: format!("m{i}"),
                text: (*text).to_owned(),
                name: if is_user { USER } else { CHAR }.to_owned(),
                is_user,
                ..Default::default()
            }
        })
        .collect()
}

/// The chat indexes of the sessions' last messages but the final one.
pub const BOUNDARIES: [usize; 3] = [18, 37, 56];
