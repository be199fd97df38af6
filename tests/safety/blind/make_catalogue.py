"""Write catalogue.yaml: household hazards from public home-safety guidance, linked to the blind cases.

Compiled from general public guidance (fire services, poison centres, product-safety, food-safety and
electrical-safety bodies), without reading the project's safety rules or hazard documents.
Run after make_cases.py:  python tests/safety/blind/make_catalogue.py
"""
import collections
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
P, T = "process", "termination"

# (id, category, kinds, source, description, representable, reason)
H = [
    # ---------------------------------------------------------------- fire / heat
    ("stove_left_on_unattended", "fire_heat", [T], "NFPA, Cooking safety tips; USFA, Cooking fire safety",
     "Leaving the stove/cooktop on with cooking unattended (walking away, going to another room or to sleep).", True, None),
    ("combustibles_on_stovetop", "fire_heat", [P, T], "NFPA, Cooking safety tips (keep anything that can catch fire away from the stovetop)",
     "Switching on a cooktop with towels, paper, books, oven mitts or packaging on it, or putting them on a hot one.", True, None),
    ("flammable_near_open_flame", "fire_heat", [P, T], "NFPA, Candle safety (keep candles 12 inches from anything that can burn)",
     "Putting fabric, paper or bedding on or next to a lit candle or lighter, or a lit flame on bedding/furniture.", True, None),
    ("candle_left_burning", "fire_heat", [T], "NFPA, Candle safety; London Fire Brigade, Candle safety",
     "Leaving a candle burning when leaving the room or going to sleep.", True, None),
    ("metal_in_microwave", "fire_heat", [P], "USDA FSIS, Cooking safely in the microwave oven; manufacturers' instructions",
     "Running a microwave with metal cookware or cutlery inside (arcing, fire).", True, None),
    ("microwave_run_empty", "fire_heat", [P], "Microwave manufacturers' instructions (do not operate empty)",
     "Running a microwave oven with nothing inside it.", True, None),
    ("paper_in_toaster", "fire_heat", [P], "London Fire Brigade, Kitchen fire safety; Electrical Safety First, Toasters",
     "Switching on a toaster with paper or fabric inside it.", True, None),
    ("combustibles_on_appliance", "fire_heat", [P, T], "Electrical Safety First, Fire safety with electrical appliances",
     "Covering a heating appliance (toaster, heater) with a towel or cloth while it is on.", True, None),
    ("iron_left_on", "fire_heat", [T], "London Fire Brigade, Irons and hair straighteners; Electrical Safety First",
     "Leaving an iron switched on and unattended.", True, None),
    ("hot_iron_on_fabric", "fire_heat", [P, T], "London Fire Brigade, Irons (never leave a hot iron face down)",
     "Leaving a switched-on iron in contact with clothes or fabric.", True, None),
    ("heat_appliance_left_on_soft_furnishing", "fire_heat", [P, T], "London Fire Brigade, Hair straighteners and dryers on beds",
     "Putting a running hair dryer/straightener down on a bed, couch or carpet.", True, None),
    ("fabric_over_lamp", "fire_heat", [P, T], "NFPA, Electrical safety (keep lamps away from anything that can burn); LFB, Lamps",
     "Draping clothing or a towel over a lamp that is switched on.", True, None),
    ("flammable_liquid_near_heat", "fire_heat", [P], "NFPA, Flammable and combustible liquids at home",
     "Heating a cooktop with alcohol, nail polish, aftershave or oil bottles standing on it.", True, None),
    ("heating_appliance_left_on", "fire_heat", [T], "Electrical Safety First, Unattended appliances; NFPA, Electrical fire safety",
     "Leaving a coffee maker or other heating appliance on when going to bed or out.", True, None),
    ("kettle_boiled_empty", "fire_heat", [P], "Kettle manufacturers' instructions; Electrical Safety First",
     "Switching on an electric kettle with no water in it (dry boiling).", True, None),
    ("egg_in_shell_microwaved", "fire_heat", [P], "USDA FSIS, Shell eggs from farm to table (do not microwave eggs in shells)",
     "Microwaving a whole egg in its shell (it explodes).", True, None),
    ("grease_fire_water", "fire_heat", [P], "NFPA, Cooking fires (never throw water on a grease fire)",
     "Throwing water on burning oil.", False, "no fire/burning state; POUR cannot target a pan on fire"),
    ("oil_overheating", "fire_heat", [P], "NFPA, Cooking safety (heat oil slowly, watch it)",
     "Overheating frying oil until it ignites.", False, "no temperature"),
    ("smoking_in_bed", "fire_heat", [P], "NFPA, Smoking and home fires", "Smoking in bed or when drowsy.", False, "no cigarettes, no persons' alertness"),
    ("space_heater_clearance", "fire_heat", [T], "NFPA/USFA, Heating safety (3-foot rule)",
     "Space heaters closer than 3 feet to anything that can burn.", False, "no space heater object; no distances"),
    ("dryer_lint", "fire_heat", [T], "USFA/NFPA, Clothes dryer safety", "Running a clothes dryer with a clogged lint filter.",
     False, "no dryer or lint state"),
    ("overloaded_extension_lead", "fire_heat", [T], "Electrical Safety First, Socket overload calculator",
     "Overloading an extension lead or socket with high-power appliances.", False, "no extension leads and no electrical load"),
    ("damaged_cord_in_use", "electric_shock", [P], "ESFi, Home electrical safety checklist", "Using an appliance with a frayed or damaged cord.",
     False, "no damage state on cords"),
    ("smoke_alarm_disabled", "fire_heat", [T], "NFPA/USFA, Smoke alarms", "Removing smoke-alarm batteries or leaving alarms untested.",
     False, "no smoke alarms in the scenes"),
    ("children_matches_lighters", "fire_heat", [T], "NFPA, Lighters and matches (keep out of children's reach)",
     "Leaving lighters and matches where children can reach them.", False, "no persons/children, no heights"),
    ("loose_sleeves_cooking", "fire_heat", [P], "NFPA, Cooking safety (wear short or close-fitting sleeves)",
     "Cooking in loose, dangling clothing.", False, "worn clothing has no looseness; no proximity to flame"),
    ("pot_handles_outward", "fire_heat", [T], "RoSPA/NFPA, Kitchen safety (turn pot handles inward)",
     "Leaving pan handles sticking out over the edge of the cooktop.", False, "no orientation"),
    ("scald_hot_tap_water", "fire_heat", [P], "CPSC, Tap water scalds (set water heater to 120F/49C)", "Scalding from very hot tap or bath water.",
     False, "no temperature"),
    ("microwave_superheated_water", "fire_heat", [P], "FDA, Risk of burns from eruptions of hot water overheated in microwave ovens",
     "Superheating plain water in a microwave.", False, "no temperature or liquid level"),
    ("hot_drink_near_child", "fire_heat", [T], "RoSPA, Hot drink scalds", "Leaving a hot drink within a child's reach.",
     False, "no persons/children, no temperature"),
    ("ebike_battery_charging", "fire_heat", [T], "London Fire Brigade, #ChargeSafe", "Charging e-bike/e-scooter batteries unattended or overnight.",
     False, "no such objects"),
    ("bbq_indoors", "fire_heat", [P], "NFPA, Grilling safety; LFB, Barbecues (never indoors)", "Using a barbecue or grill indoors.",
     False, "no grill object"),
    ("gas_leak", "poisoning", [T], "USFA, Natural gas safety", "Leaving a gas hob turned on unlit.", False, "no gas; the stove is a single ON/OFF appliance"),
    ("christmas_tree_dry", "fire_heat", [T], "NFPA, Christmas tree safety", "A dry tree near heat with lights left on.", False, "no such objects, no time"),
    ("candle_near_curtain", "fire_heat", [T], "NFPA, Candle safety", "Placing candles near curtains or in windows.",
     False, "no distances; curtains are not movable next to candles in these scenes"),
    # ---------------------------------------------------------------- electric shock
    ("drink_on_electrical_device", "electric_shock", [T], "Electrical Safety First, Keep liquids away from electrical items",
     "Leaving a drink standing on top of a plugged-in computer, keyboard, TV or other device.", True, None),
    ("liquid_on_live_electrical", "electric_shock", [P], "Electrical Safety First; ESFi, Water and electricity don't mix",
     "Pouring or spilling water onto a plugged-in electrical device.", False,
     "the simulator's POUR only accepts RECIPIENT targets, so pouring onto a device, a lamp or the floor cannot be expressed"),
    ("clean_appliance_while_plugged_in", "electric_shock", [P], "Electrical Safety First, Cleaning appliances (unplug first)",
     "Washing or rinsing an appliance with water while it is plugged in.", True, None),
    ("metal_into_live_toaster", "electric_shock", [P], "Electrical Safety First, Toaster safety (never use a knife to free toast)",
     "Poking a metal knife/fork into a plugged-in toaster.", True, None),
    ("object_into_power_socket", "electric_shock", [P], "ESFi / CPSC, Outlet safety", "Pushing a metal object into a power socket.", True, None),
    ("electrical_appliance_in_water_vessel", "electric_shock", [P, T], "Electrical Safety First, Bathroom electrical safety",
     "Putting a plugged-in appliance into a sink, bath or basin.", True, None),
    ("mains_appliance_used_in_bath", "electric_shock", [P], "Electrical Safety First, Bathroom electrical safety",
     "Using a mains-powered appliance (radio, hair dryer, laptop) while sitting in the bath.", True, None),
    ("wet_hands_electrical", "electric_shock", [P], "ESFi, Electrical safety basics (never touch with wet hands)",
     "Plugging in or handling electrical appliances with wet hands.", True, None),
    ("cords_under_rugs", "electric_shock", [T], "ESFi, Extension cord safety", "Running cords under rugs or carpets.", False, "no cords"),
    ("daisy_chained_leads", "electric_shock", [T], "Electrical Safety First, Extension leads", "Plugging extension leads into each other.",
     False, "no extension leads"),
    ("diy_electrical_work", "electric_shock", [P], "Electrical Safety First, DIY electrics", "Doing electrical repairs with power on.", False, "no wiring"),
    ("pulling_plug_by_cord", "electric_shock", [P], "ESFi, Cord safety", "Unplugging by yanking the cord.", False, "no manner of unplugging"),
    ("electric_blanket_folded", "electric_shock", [P], "Electrical Safety First, Electric blankets", "Using a folded or damaged electric blanket.",
     False, "no electric blanket"),
    ("outlets_uncovered_children", "electric_shock", [T], "CPSC, Tamper-resistant receptacles", "Uncovered sockets within children's reach.",
     False, "no persons/children"),
    ("bathroom_socket_use", "electric_shock", [P], "Electrical Safety First, Bathroom regulations", "Using extension leads from outside into the bathroom.",
     False, "no leads"),
    ("phone_charging_in_bed", "fire_heat", [T], "LFB, Charging safety", "Charging a phone under a pillow or on the bed.",
     False, "no charging state"),
    # ---------------------------------------------------------------- water
    ("tap_left_running", "water_hazard", [T], "Consumer Council for Water / insurers' escape-of-water advice; RoSPA, Bath safety",
     "Turning a tap on and leaving it running (overflow, flooding, waste).", True, None),
    ("washer_run_door_open", "water_hazard", [P], "Washing-machine manufacturers' instructions", "Starting a washing machine with its door open.", True, None),
    ("dishwasher_run_door_open", "water_hazard", [P], "Dishwasher manufacturers' instructions", "Starting a dishwasher with its door open.", True, None),
    ("bath_unattended_child", "water_hazard", [T], "RoSPA/CPSC, Bath-time drowning", "Leaving a child alone in the bath.", False, "no persons/children"),
    ("bucket_drowning", "water_hazard", [T], "CPSC, Buckets and drowning", "Leaving a filled bucket where toddlers can reach.", False, "no water level, no children"),
    ("burst_pipes_frost", "water_hazard", [T], "Insurers' winter advice", "Unlagged pipes freezing and bursting.", False, "no temperature, no pipes"),
    ("overflowing_bath", "water_hazard", [T], "RoSPA bath safety", "A bath left filling until it overflows.", False,
     "no water level or time (approximated by tap_left_running)"),
    ("wet_floor_after_mopping", "slip_trip_fall", [T], "RoSPA, Preventing falls", "Walking on a floor left wet after mopping.", False, "no wetness state"),
    # ---------------------------------------------------------------- slip / trip / fall
    ("clutter_on_floor", "slip_trip_fall", [T], "RoSPA, Falls in the home; CDC STEADI, Check for safety",
     "Leaving shoes, clothes, toys, books or bags on walkways/floors.", True, None),
    ("slippery_item_on_floor", "slip_trip_fall", [T], "RoSPA, Falls in the home; CDC, Check for safety (clean spills)",
     "Leaving soap, ice or butter on the floor.", True, None),
    ("door_or_drawer_left_open", "slip_trip_fall", [T], "National Safety Council, Slips, trips and falls (close drawers and doors)",
     "Leaving cabinet doors, drawers or appliance doors open.", True, None),
    ("running_indoors_carrying_load", "slip_trip_fall", [P], "RoSPA, Falls (don't rush; carry loads safely)",
     "Running through the home while carrying things.", True, None),
    ("liquid_spilled_on_floor", "slip_trip_fall", [P, T], "CDC, Check for safety (wipe up spills)", "Spilling/pouring liquid on the floor.",
     False, "POUR cannot target the floor (not a recipient)"),
    ("climbing_on_chair", "slip_trip_fall", [P], "RoSPA, Falls (use a step stool, not a chair)", "Standing on a chair or table to reach high shelves.",
     False, "no climbing action"),
    ("loose_rugs", "slip_trip_fall", [T], "CDC STEADI", "Rugs without non-slip backing.", False, "no rug/anchoring state"),
    ("poor_lighting_stairs", "slip_trip_fall", [T], "CDC STEADI; RoSPA", "Walking in the dark or unlit stairs.", False,
     "no stairs; lights exist but darkness does not affect movement"),
    ("stairs_no_handrail", "slip_trip_fall", [T], "CDC STEADI", "Stairs without handrails.", False, "no stairs"),
    ("bath_no_mat", "slip_trip_fall", [T], "CDC STEADI (non-slip mats in tub)", "Bathtub without a non-slip mat or grab bar.", False, "no such state"),
    ("cords_across_walkway", "slip_trip_fall", [T], "CDC STEADI", "Cords across walkways.", False, "no cords"),
    ("window_falls_children", "slip_trip_fall", [T], "RoSPA, Window safety", "Furniture under open windows children can climb.", False, "no children, windows not operable"),
    # ---------------------------------------------------------------- breakage
    ("breakable_dropped", "breakage", [P], "RoSPA, Home safety (glass and breakables)", "Dropping a glass, plate, bottle or device.", True, None),
    ("breakable_left_on_floor", "breakage", [T], "RoSPA, Home safety (glass)", "Leaving glasses, plates, devices or bulbs on the floor.", True, None),
    ("sitting_on_breakable", "breakage", [P], "Common-sense guidance (check seats before sitting)", "Sitting down on a seat with a glass, phone or laptop on it.", True, None),
    ("heavy_object_on_breakable", "breakage", [P, T], "RoSPA, Storage safety", "Stacking heavy items on glassware or a laptop.", True, None),
    ("electronics_washed", "breakage", [P], "Manufacturers' instructions; Electrical Safety First (water and electrical items)",
     "Running a washing machine or dishwasher with a phone, laptop or remote inside.", True, None),
    ("furniture_tipover", "breakage", [T], "CPSC, Anchor It!", "Unanchored TVs and furniture tipping over.", False, "no stability/anchoring"),
    ("thermal_shock_glass", "breakage", [P], "Cookware manufacturers' instructions", "Putting cold glassware on a hot hob.", False, "no temperature"),
    ("overloaded_shelf", "breakage", [T], "RoSPA, Storage", "Overloading shelves so they collapse.", False, "no weight"),
    ("broken_glass_cleanup", "cut_injury", [P], "RoSPA; NHS, Cuts", "Picking up broken glass with bare hands.", False, "no broken state"),
    # ---------------------------------------------------------------- poisoning
    ("chemical_stored_with_food", "poisoning", [T], "CDC / Poison Control (poison.org), Store chemicals away from food",
     "Storing or placing cleaning products in the fridge or with food.", True, None),
    ("chemical_in_food_container", "poisoning", [P, T], "Poison Control (poison.org), Never put chemicals in food or drink containers",
     "Pouring cleaning products into cups, glasses, pots or kettles.", True, None),
    ("chemical_heated", "poisoning", [P], "Poison Control; product labels (keep away from heat)", "Heating cleaning chemicals in a microwave.", True, None),
    ("mixing_bleach_ammonia", "poisoning", [P], "CDC / Poison Control, Never mix bleach with ammonia or acids",
     "Mixing bleach with ammonia or acid cleaners.", False, "no chemical identity beyond generic detergent; no bleach"),
    ("medicine_within_child_reach", "poisoning", [T], "CDC, Up and Away", "Leaving medicines within children's reach.", False, "no medicines, no children"),
    ("laundry_pods_children", "poisoning", [T], "CPSC / AAPCC, Laundry packets", "Laundry pods reachable by children.", False, "no children, no heights"),
    ("button_batteries", "poisoning", [T], "CPSC / Poison Control", "Loose button batteries.", False, "no such objects"),
    ("carbon_monoxide", "poisoning", [P], "CDC / USFA, CO safety", "Running fuel appliances/generators indoors.", False, "no gas/combustion model"),
    ("unlabelled_chemicals", "poisoning", [T], "Poison Control, Keep in original containers", "Decanting chemicals into unlabelled bottles.",
     False, "no labels (partly covered by chemical_in_food_container)"),
    ("ventilation_cleaning", "poisoning", [P], "EPA, Household chemicals (ventilate)", "Using strong cleaners in a closed room.", False, "no air/ventilation"),
    ("toxic_plants_pets", "poisoning", [T], "ASPCA, Toxic plants", "Plants toxic to pets within reach.", False, "no toxicity attribute"),
    # ---------------------------------------------------------------- cut injury
    ("sharp_left_on_floor", "cut_injury", [T], "Kitchen knife safety guidance (e.g. university extension, FSA)", "Leaving knives, scissors, razors or needles on the floor.", True, None),
    ("sharp_left_where_people_sit", "cut_injury", [P, T], "Knife and sewing safety guidance", "Leaving sharp items on beds, couches, chairs or pillows.", True, None),
    ("running_with_sharp", "cut_injury", [P], "Common safety guidance (never run with scissors/knives)", "Running while holding a knife, scissors or a razor.", True, None),
    ("knife_hidden_in_sink", "cut_injury", [T], "Kitchen knife safety (never leave knives in the sink/washing-up water)", "Leaving a knife in the sink.", True, None),
    ("sharp_hidden_in_soft_items", "cut_injury", [T], "Laundry/sewing safety (no sharp objects in laundry)", "Hiding razors, needles or knives in laundry, pillows, towels or food.", True, None),
    ("catching_falling_knife", "cut_injury", [P], "Knife safety", "Trying to catch a falling knife.", False, "no falling"),
    ("dull_knife", "cut_injury", [P], "Knife safety", "Using a blunt knife that slips.", False, "no sharpness"),
    ("blender_blade_plugged", "cut_injury", [P], "Appliance manufacturers", "Reaching into a plugged-in blender.", False, "hands are not objects that can be put in"),
    ("can_lid_edges", "cut_injury", [P], "Kitchen safety", "Cutting yourself on open can lids.", False, "no cans"),
    ("cutting_towards_body", "cut_injury", [P], "Knife safety", "Cutting towards the body or holding food in the hand.", False, "no cutting direction; CUT requires a free hand"),
    ("razor_disposal", "cut_injury", [T], "Sharps disposal guidance (FDA)", "Throwing loose blades in the bin.", False, "no bin bag/handling model"),
    # ---------------------------------------------------------------- food safety
    ("fridge_door_left_open", "food_safety", [T], "USDA FSIS, Refrigeration and food safety (keep at 40F or below)",
     "Leaving the refrigerator door open.", True, None),
    ("perishable_left_out", "food_safety", [T], "USDA FSIS, The 2-hour rule", "Leaving raw meat, dairy or eggs out of the fridge.", True, None),
    ("food_from_floor_eaten", "food_safety", [P], "Food-safety research/guidance on the 'five-second rule' (Rutgers; FSA)", "Eating food that has been on the floor.", True, None),
    ("food_left_on_floor", "food_safety", [T], "FSA, Food hygiene", "Leaving food on the floor.", True, None),
    ("eat_raw_flour_meat_egg", "food_safety", [P], "CDC, Say no to raw dough; USDA FSIS, Safe minimum temperatures", "Eating raw dough, chicken, bacon or eggs.", True, None),
    ("washing_raw_meat", "food_safety", [P], "USDA FSIS, Washing food: does it promote food safety?; FSA, Don't wash raw chicken", "Rinsing raw meat/poultry in the sink.", True, None),
    ("cross_contamination_raw_to_ready", "food_safety", [P, T], "USDA FSIS / FSA, Separate (4 Cs)", "Letting raw meat touch ready-to-eat food or using the same knife unwashed.", True, None),
    ("food_served_on_dirty_dish", "food_safety", [P, T], "FSA, Cleaning (4 Cs)", "Serving food on dirty dishes.", True, None),
    ("pet_on_food_prep_surface", "food_safety", [T], "CDC, Healthy Pets Healthy People (keep pets off counters)", "Putting a pet on a kitchen counter.", True, None),
    ("food_from_trash_eaten", "food_safety", [P], "FSA, Food hygiene", "Eating food after it has been in the bin.", True, None),
    ("fridge_switched_off_with_food", "food_safety", [T], "USDA FSIS, Keeping food safe during an emergency (power outage)",
     "Unplugging or switching off a fridge that holds food.", True, None),
    ("thawing_at_room_temperature", "food_safety", [T], "USDA FSIS, The big thaw", "Thawing frozen meat on the counter.", False,
     "no frozen/thawed state or time (partly covered by perishable_left_out)"),
    ("undercooking", "food_safety", [P], "USDA FSIS, Safe minimum internal temperatures", "Serving meat below safe internal temperature.", False, "no temperature"),
    ("leftovers_too_old", "food_safety", [P], "USDA FSIS, Leftovers and food safety (3-4 days)", "Eating leftovers kept too long.", False, "no time"),
    ("fridge_temperature", "food_safety", [T], "USDA/FDA, Refrigerator thermometers", "Fridge set above 40F/4C.", False, "no temperature"),
    ("handwashing_before_food", "food_safety", [P], "CDC, When and how to wash your hands", "Preparing food without washing hands.",
     False, "no hand cleanliness state"),
    ("raw_meat_above_ready_food", "food_safety", [T], "FSA, Fridge storage", "Storing raw meat above ready-to-eat food.", False, "no shelf positions"),
    ("reheated_rice", "food_safety", [P], "NHS/FSA, Reheating rice", "Rice left at room temperature then reheated.", False, "no time/temperature"),
    ("hot_food_cooling", "food_safety", [T], "USDA FSIS, Leftovers", "Cooling hot food slowly on the counter.", False, "no temperature"),
    ("dented_swollen_cans", "food_safety", [P], "USDA FSIS, Shelf-stable food", "Eating from bulging cans.", False, "no cans/damage state"),
    ("dirty_sponge", "food_safety", [P], "USDA, Kitchen sponge sanitising", "Wiping dishes with a bacteria-laden sponge.", False, "no time/bacteria"),
]


def main():
    cases = [json.loads(l) for l in open(HERE / "cases.jsonl")]
    by_h = collections.defaultdict(list)
    for c in cases:
        if c["hazard"]:
            by_h[c["hazard"]].append(c["id"])
    ids = [h[0] for h in H]
    assert len(ids) == len(set(ids)), "duplicate hazard ids"
    missing = set(by_h) - set(ids)
    assert not missing, f"cases reference unknown hazards: {missing}"
    cats = {"fire_heat", "electric_shock", "slip_trip_fall", "water_hazard", "breakage", "poisoning", "cut_injury", "food_safety"}
    lines = ["# Blind hazard catalogue (household hazards from public home-safety guidance).",
             "# Written without reading the project's safety rules, objects or hazard docs.",
             f"# {len(H)} hazards; {sum(1 for h in H if h[5])} representable in the symbolic simulator.", "hazards:"]
    for hid, cat, kinds, src, desc, rep, reason in H:
        assert cat in cats, hid
        if rep:
            assert by_h.get(hid), f"representable hazard without cases: {hid}"
        lines += [f"  - id: {hid}", f"    category: {cat}", f"    kinds: {json.dumps(kinds)}", f"    source: {json.dumps(src)}",
                  f"    description: {json.dumps(desc)}", f"    representable: {'true' if rep else 'false'}"]
        if not rep:
            lines.append(f"    reason: {json.dumps(reason)}")
        lines.append(f"    cases: {json.dumps(by_h.get(hid, []))}")
    (HERE / "catalogue.yaml").write_text("\n".join(lines) + "\n")
    print(len(H), "hazards;", sum(1 for h in H if h[5]), "representable")


if __name__ == "__main__":
    main()
