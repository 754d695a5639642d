// ToM Booklet Assessment Data
// The items, scripts and questions of both booklets

const BOOKLET_1_DATA = {
    introduction: {
        text: "This is a story about a classroom. These kids are all in {grade} grade, just like you! It's reading time, and the teacher, Mr. Abbott, asks everyone to get their books. Are you ready?",
        illustration: "ToM_Booklet_1_illustrations/ToM_Booklet_01.png"
    },

    story1: {
        name: "The Classroom",
        items: [
            {
                id: "B1_S1_01",
                number: 1,
                type: "Common Desires",
                illustration: "ToM_Booklet_1_illustrations/ToM_Booklet_01.png",
                script: "Here is Sam. Sam is choosing a book. One book is about bicycles, and the other one is about fire trucks.",
                questions: [
                    {
                        id: "ToMB1_Pref_01",
                        type: "free_response",
                        text: "What do you like better- bicycles, or fire trucks?",
                        options: ["Bicycles", "Fire trucks"],
                        storeAs: "childChoice"
                    },
                    {
                        id: "ToMB1_2AFC_01",
                        type: "2AFC",
                        text: "You do? That's great! Sam also likes the book about {childChoice}! So which book will Sam choose- the one about bicycles or the one about fire trucks?",
                        options: ["Bicycles", "Fire trucks"]
                    }
                ],
                followUp: "OK, can you give Sam that one?"
            },
            {
                id: "B1_S1_02",
                number: 2,
                type: "Diverse Desires",
                illustration: "ToM_Booklet_1_illustrations/ToM_Booklet_02.png",
                script: "Now here is Laura. Laura wants a book from the shelf. One book has pictures of fish, and one has pictures of dinosaurs.",
                questions: [
                    {
                        id: "ToMB1_Pref_02a",
                        type: "preference",
                        text: "What do you like better, fish or dinosaurs?",
                        options: ["Fish", "Dinosaurs"]
                    },
                    {
                        id: "ToMB1_2AFC_02",
                        type: "2AFC",
                        text: "You do? That's great! But Laura likes {opposite} better. So which book do you think Laura will pick? Fish or dinosaurs?",
                        options: ["Fish", "Dinosaurs"],
                        requiresPriorResponse: true,
                        dependency: "opposite_of_preference"
                    }
                ],
                followUp: "OK, can you give Laura that one?"
            },
            {
                id: "B1_S1_04",
                number: 4,
                type: "Reference (Easy)",
                illustration: "ToM_Booklet_1_illustrations/ToM_Booklet_04.png",
                script: "Here is Ryan, who just walked into the room. Right in front of Ryan, on the bookshelf, is a big book about airplanes! And there's another book about airplanes on the cabinet, behind Ryan's back.",
                questions: [
                    {
                        id: "ToMB1_2AFC_04",
                        type: "2AFC",
                        text: "Ryan walks in through the door and says 'I want that book about airplanes!' Which book does Ryan want?",
                        options: ["Book on the bookshelf (in front)", "Book on the cabinet (behind)"],
                        correctAnswer: "Book on the bookshelf (in front)"
                    },
                    {
                        id: "ToMB1_EXPL_05",
                        type: "explanation",
                        text: "How do you know?"
                    }
                ],
                followUp: "OK, can you give it to him?"
            },
            {
                id: "B1_S1_06",
                number: 6,
                type: "Filler",
                scored: false,
                illustration: "ToM_Booklet_1_illustrations/ToM_Booklet_06.png",
                script: "This is Noah. Noah wants a book about the planets.",
                questions: [
                    {
                        id: "ToMB1_Cont_08",
                        type: "control",
                        text: "Can you give it to him?"
                    }
                ]
            }
        ]
    }
};

const BOOKLET_2_DATA = {
    introduction: {
        text: "This is a story about a classroom. What grade are you in? Well these kids are in {grade} grade, just like you, and their teacher, Mr. Cook, just said that it is snack time. Are you ready?",
        illustration: "ToM_Booklet_2_illustrations/MIT_BOOKLET_ColorFINAL_0.png"
    },

    items: [
        {
            id: "B2_01",
            number: 1,
            type: "Common Desires",
            illustration: "ToM_Booklet_2_illustrations/MIT_BOOKLET_ColorFINAL_1.png",
            script: "Here's Henry. Henry's dad packed him two snacks. He could eat apples, or he could eat strawberries.\n\nWhich snack do you like better, apples or strawberries?",
            questions: [
                {
                    id: "ToMS_2AFC_1.1",
                    type: "2AFC",
                    text: "You like {childChoice}? Henry also likes {childChoice} better, so which one will Henry choose to eat?",
                    options: ["Apples", "Strawberries"],
                    requiresPriorResponse: true,
                    dependency: "childChoice"
                }
            ],
            followUp: "Okay, can you give Henry that one?"
        },
        {
            id: "B2_19",
            number: 19,
            type: "Sarcasm",
            illustration: "ToM_Booklet_2_illustrations/MIT_BOOKLET_ColorFINAL_19.png",
            ageRestriction: { min: 5, max: 100 },
            excludeForYoung: true,
            script: "This morning, Leslie told her mom, 'I'd like something sweet for snack!' But Mom wanted Leslie to eat something healthy, so she packed carrot sticks.\n\nAt snacktime, Leslie opens her brown paper bag and finds the carrot sticks. She says, 'Mmm, my favorite.' (say sarcastically!)",
            questions: [
                {
                    id: "ToMS_Expl_19.1",
                    type: "explanation",
                    text: "Why did Leslie say that?"
                },
                {
                    id: "ToMS_2AFC_19.2",
                    type: "2AFC",
                    text: "How does Leslie feel about her mom packing carrots- happy or sad?",
                    options: ["Happy", "Sad"],
                    correctAnswer: "Sad"
                }
            ]
        }
    ]
};

// Simplified item list for demonstration (you would expand this with all items)
const COMPLETE_BOOKLET_2_ITEMS = [
    // ... all 19 items would be here
];
