"""A built-in list of common English words (lower case a-z) for the synthetic word renderer.

Hand-assembled, ~2,600 words; `WORDS` is sorted and free of duplicates. The renderer varies case and
adds random alphanumeric strings, so the list only needs to cover ordinary vocabulary.
"""

_TEXT = """
abandon able about above abroad absence absolute absorb abstract abuse academic academy accent
accept access accident accompany account accuse achieve acid acquire acre across act action
active activity actor actress actual adapt add address adjust admire admit adopt adult advance
advice advocate affair affect afford afraid after afternoon again against age agency agenda
agent aggressive ago agree agriculture ahead aid aim air aircraft airline airport alarm album
alcohol alien align alive all alliance allow ally almost alone along alpha already also alter
although altitude aluminum always amateur amazing ambition ambulance amendment among amount
analysis anchor ancient anger angle angry animal ankle anniversary announce annual another
answer antique anxiety anxious any anybody anyone anything anyway apart apartment apology
apparatus apparent appeal appear appetite applause apple appliance apply appoint appointment
appreciate approach approve april arch architect arctic area arena argue argument arise arm
armor army aroma around arrange arrest arrival arrive arrow art article artist artwork as ash
aside ask asleep aspect assault assembly assess asset assist assume athlete atlas atom attach
attack attempt attend attic attitude attract auction audience audio august aunt author auto
autumn available avenue average avoid awake award aware away awful axis baby back background
bacon bacteria bad badge badly bag bake bakery balance balcony ball bamboo ban banana band bank
banner bar barely barn barrel barrier base baseball basement basic basin basis basket bat bath
battery battle bay beach beam bean bear beard beast beat beautiful beauty beaver because become
bed bedroom bee beef beer beetle before beggar begin behavior behind being belief believe bell
belly belong below belt bench bend beneath benefit berry beside best bet better between beyond
bible bicycle big bike bill billion bind bird birth birthday bishop bit bite bitter black blade
blame blank blanket blast blend bless blind block blood blossom blouse blow blue boar board
boast boat body boil bold bolt bomb bond bone bonus book boom boot booth border born borrow boss
both bother bottle bottom bounce boundary bow bowl box boy bracket brain brake branch brand
brass brave bravo bread break breakfast breast breath breathe breeze brick bride bridge brief
bright brilliant bring broad broccoli broken bronze broom brother brown brush bubble bucket bud
budget buffalo buffet bug build building bulb bull bullet bunch bundle burden burger burn burst
bury bus business busy butter butterfly button buy buyer cabbage cabin cabinet cable cactus cafe
cage cake calculate calendar calf call calm camel camera camp campaign campus can canal cancel
cancer candidate candle candy canoe canvas canyon cap capable capacity cape capital captain
capture car carbon card care career careful cargo carpet carrot carry cart cartoon carve case
cash cashier casino cast castle cat catch category cattle cause cave cedar ceiling celebrate
cell cement center central century cereal ceremony certain chain chair chairman chalk challenge
chamber champion chance change channel chapel chapter character charge charity charm chart chase
chat cheap check cheek cheese chef chemical cherry chess chest chicken chief child childhood
chili chin chip chocolate choice choose chorus church cigarette cinema circle circus citizen
citrus city civil claim class classic clay clean clear clearly clerk clever click client cliff
climate climb clinic clip clock close closet cloth clothes cloud clown club clue cluster coach
coal coast coat coconut code coffee coin cold collapse collar colleague collect college colony
color column combine come comedy comet comfort comic command comment commit common company
compare compass compete complain complete complex computer concept concern concert conclude
concrete condition conduct cone confirm conflict confuse congress connect consider constant
construct consult consume contact contain content contest context continue contract control
convert convince cook cookie cool cope copper copy coral cord core corn corner correct cosmic
cost costume cottage cotton couch cougar could council count counter country county couple
coupon courage course court cousin cover cow crab crack cradle craft crane crash crater crayon
crazy cream create credit creek crew crime crisis crisp critic crop cross crowd crown crucial
cruel crush cry crystal cube cucumber culture cup cupboard curious current curtain curve cushion
custom customer cut cycle dad daily dairy daisy dam damage dance dancer danger dark dart dash
data date daughter dawn day dead deal dealer dear death debate debris debt decade decent decide
deck declare decline decorate deep deer defeat defend define degree delay delight deliver delta
demand denim dentist deny depart depend deposit depth deputy derive describe desert deserve
design desire desk despite dessert detail detect detective develop device devote diamond diary
dictate die diesel diet differ digital dinner dinosaur diploma direct dirt dirty disagree
disaster discover discuss disease dish dismiss display distance district dive divide dock doctor
document dog doll dollar dolphin domain dome donkey donor door double doubt dough dove down
dozen draft drag dragon drain drama draw drawer dream dress drift drill drink drive driver drop
drug drum dry duck due duke dune dust duty each eager eagle ear early earn earth ease east easy
eat echo eclipse economy edge edit editor educate effect effort egg eight either elastic elbow
elder elect electric element elephant elevator elite elk else email ember embrace emerald emerge
emotion empire employ empty enable end enemy energy engage engine engineer enjoy enormous enough
ensure enter entire entry envelope epic episode equal equator equip era eraser erode error
escape essay essence estate eternal ethics evening event ever every evidence exact exam example
excel except exchange excite excuse execute exercise exhibit exist exit exotic expand expect
expense expert explain explode explore export expose express extend extent extra extreme eye
fabric face fact factor factory fade fail faint fair faith falcon fall false fame family famine
famous fan fancy fantasy far farm farmer fashion fast fat father fault fauna favor fear feather
feature fee feed feel fellow female fence ferry festival fever few fiber fiction field fifth
fifty fig fight figure file fill film filter final finance finch find fine finger finish fire
firm first fish fit five fix flag flame flash flask flat flavor flee flesh flight flint float
flock flood floor flour flow flower flute fly foam focus fog fold folk follow food foot football
force foreign forest forever forge forget forgive fork form formal former fortune forty forward
fossil found fountain four fox fragile frame free freedom freeze freight fresh friend frog front
frost frozen fruit fudge fuel full fun function fund fungus funnel funny fur future gain galaxy
gallery game gang gap garage garden garlic garment gas gate gather gaze gazelle gear gem gene
general generous genius genre gentle geometry gesture get ghost giant gift giraffe girl give
glacier glad glance glass glimpse global globe glory glove glue goal goat god gold golden golf
good goose gorilla gospel gossip govern gown grab grade grain grand grant grape graph grass
grave gravel gravity gray great green greet grey grief griffin grill grin grocery ground group
grow growth guard guess guest guide guilty guitar gulf gun guy gym habit hair half hall hammer
hamster hand handle hang happen happy harbor hard hardly harm harvest hat hate have hawk hazard
head health heap hear heart heat heaven heavy hedge height helium hell hello helmet help hence
herb here hermit hero hide high highway hill hinge hint hippo hire history hit hive hobby hockey
hold hole holiday hollow holy home honest honey honor hood hook hope horizon hornet horror horse
hospital host hostel hot hotel hour house however huge human humor hundred hunger hungry hunt
hurdle hurry hurt husband hut hybrid hymn ice icon idea ideal identify igloo ignore ill illegal
image imagine impact imply import impose improve inbox inch include income increase indeed index
indicate infant inform initial injury ink inner input inquiry insect inside insist install
instance instead insure intend interest internal invest invite involve iron island issue item
ivory jacket jaguar jail jam jar jazz jeans jelly jewel job jockey join joint joke journal
journey joy judge judo juice jump jungle junior jury just justice kangaroo kayak keen keep
kernel kettle key kick kid kidney kill kind king kingdom kiss kitchen kite kiwi knee knife
knight knock know koala label labor lack ladder lady lagoon lake lamb lamp land language lantern
laptop large laser last late later laugh launch lava law lawn lawyer layer lazy lead leader leaf
league lean learn least leather leave lecture left leg legal legend lemon lend length leopard
lesson letter lettuce level lever liberal library license lid lie life lift light like likely
lily limb lime limit line linen link lion lip liquid list listen little live liver lizard load
loan lobby lobster local lock locker lodge logic lonely long look loose lord lose loss lost lot
lotus loud love lovely lover low lower luck lumber lunar lunch lung lyric machine mad magazine
magic magnet mail main major make male mall mammal man manage mango manner mansion many map
maple marathon marble march margin marine mark market marriage mask master match mate matter
maximum maybe mayor meadow meal mean measure meat medal media medical medium meet melody melon
member memory mental mention mentor menu mercury mercy mere merit message metal meteor meter
method middle might migrate mild military milk mill mind mine mineral minimum minister minor
mint minute miracle mirror miss mission mist mistake mix mixer mobile mode model modern moment
money monitor monkey monster month mood moon moral more morning mosaic mosquito moss most motel
moth mother motion motor mount mountain mouse mouth move movie much mud muffin mule mural murder
muscle museum mushroom music must mustard mutual mystery myth nail name napkin narrow nation
native nature near nearly neat neck nectar need needle negative neighbor nerve nest net network
never new news next nice night nine noble nobody noise none noodle noon normal north nose note
nothing notice novel now number nurse nut nylon oak oasis object obtain obvious occasion occupy
occur ocean odd offer office officer often oil okay old olive omelet once one onion online only
opal open opera operate opinion oppose option orange orbit orchard orchid order ordinary organ
origin ostrich other otter outcome outdoor outer outfit output outside oven over owe owl own
owner oxygen oyster pace pack package paddle page pain paint pair pajamas palace pale palette
palm pan panda panel panic panther paper parade parent park parrot part partner party pass past
pasta pastry path patient pattern pause pay peace peach peak peanut pear pebble pelican pen
penalty pencil penguin people pepper per perfect perform perfume perhaps period permit person
pet pharmacy phase phone photo phrase piano pick picture pie piece pig pigeon pile pill pillow
pilot pin pine pink pioneer pipe pirate pitch pizza place plain plan plane planet plant plastic
plate play player plaza please pleasure plenty plot plum plus pocket poem poet point poison
polar pole police policy polish polite pony pool poor pop poppy popular porch port portal
portion pose position positive possess post pot potato pound pour powder power praise pray
prefer prepare present press pretty prevent price pride priest prime prince print prior prism
prison private prize problem process produce profit program project promise proof proper protect
proud prove provide public pull pump punch pupil puppet puppy purchase pure purple purpose push
put puzzle pyramid quality quarter quartz queen question quick quiet quilt quit quite quote
rabbit raccoon race racial radar radio radish raft rail rain rainbow raise raisin ranch range
rank rapid rare rate rather ratio raven raw razor reach react read ready real realize reason
rebel recall receive recent recipe record recover reduce reef refer reflect reform refuse regard
region regular reject relate relax release relief rely remain remark remote remove rent repair
repeat replace reply report reptile request rescue research reserve resist resolve resort
respect respond rest result retain retire return reveal review reward rhino rhythm ribbon rice
rich riddle ride rifle right ring rise risk ritual rival river road robin robot rock rocket
rodeo role roll roof room root rope rose rough round route routine row royal rub rubber ruby
rule run rural rush sacred sad saddle safe safety sail salad salary sale salmon salt same sample
sand sandal satellite satisfy sauce sausage save saxophone say scale scarf scene schedule scheme
school science scooter score scorpion screen script sea seal search season seat second secret
section sector secure see seed seek seem select self sell send senior sense series serious serve
service session set settle seven severe sex shade shadow shake shall shape share shark sharp
sheep sheet shelf shell shelter shift shine ship shirt shock shoe shoot shop shore short shot
should shoulder shout show shower shrimp shut shy sick side sight sign signal silence silent
silk silver similar simple since sing singer single sink siren sister sit site six size skate
skeleton sketch skill skin skirt skull sky slave sled sleep slice slide slight slip slogan slope
slow small smart smell smile smoke smooth snack snail snake snow soap soccer social sock sofa
soft soil soldier solid solve some son song soon sorry sort soul sound soup source south space
spare speak special speech speed spell spend spider spin spinach spirit split sponge spoon sport
spot spread spring square squid squirrel stable stadium staff stage stair stake stamp stand
standard star stare start state station statue stay steady steak steal steam steel step stereo
stick sticker still stock stomach stone stop store stork storm story stove straight strange
strawberry stream street stress stretch strike string strip stroke strong structure student
studio study stuff style subject submarine submit subway succeed success such sudden suffer
sugar suggest suit sultan summer summit sun sunset super supply support suppose sure surface
surfer surgery surprise survey survive suspect swan sweater sweet swim swing switch symbol syrup
system table tablet taco tail take tale talent talk tall tango tank tape tapestry target task
taste tattoo tax taxi tea teach teacher team teapot tear technique teen teeth telephone tell
temple tend tennis tension tent term terrace test text thank theater theme theory there thick
thin thing think third thirty though thought thread threat three throat through throw thumb
thunder ticket tide tie tiger tight till timber time tiny tip tired tissue title toast today toe
tofu together toilet tomato tone tongue tonight tool tooth top topic torch tornado tortoise
total touch tough tour tourist toward towel tower town toy trace track tractor trade tradition
traffic trail train transfer trap travel tray treat tree trend trial tribe trick trip trolley
troop trophy truck true truly trumpet trust truth try tube tulip tuna tune tunnel turkey turn
turtle tuxedo twelve twenty twice twin twist two type typical ugly umbrella uncle under unicorn
uniform union unique unit unite unity universe unless until unusual upon upper upset urban urge
use used useful user usual vacuum valley valuable value valve van vanilla vapor vary vast
vegetable vehicle velvet vendor venture venus version very vessel veteran victim victory video
view village violent violin virtue virus visible vision visit visual vital voice volcano volume
vote vulture waffle wage wagon wait wake walk wall walnut walrus wander want war warm warn wash
wasp waste watch water wave way weak wealth weapon wear weasel weather wedding week weekend
weigh weight weird welcome well west wet whale what wheat wheel when where whether which while
whisper whistle white whole why wide wife wild will win wind window wine wing winner winter wire
wise wish with within without witness wizard wolf woman wonder wood wooden word work worker
world worry worth would wound wrap write writer wrong yacht yard yeah year yellow yes yesterday
yet yield yogurt young youth zebra zero zipper zone zoo
"""

WORDS = tuple(sorted(set(_TEXT.split())))
