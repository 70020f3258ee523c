package rails

// nameGroup keeps given names and surnames of one tradition together, so a
// generated name reads like a real person's.
type nameGroup struct {
	firstNames []string
	surnames   []string
}

// nameGroups are common Nigerian names (Yoruba, Igbo, Hausa-Fulani, and the
// South-South and Middle Belt), in capitals as bank name enquiries print them.
var nameGroups = [...]nameGroup{
	{ // Yoruba
		firstNames: []string{"ADEBAYO", "OLUWASEUN", "FOLAKE", "TEMITOPE", "ADEWALE", "BUKOLA", "OLUWAFEMI",
			"YETUNDE", "BABATUNDE", "FUNMILAYO", "OLUMIDE", "ABIODUN", "KEHINDE", "TAIWO", "ADEOLA", "OLAMIDE",
			"TOLULOPE", "AYODELE", "MOJISOLA", "DAMILOLA", "OLUWATOSIN", "SEGUN", "IFEOLUWA", "ADESOLA"},
		surnames: []string{"ADEYEMI", "OGUNLEYE", "ADEBAYO", "ADELEKE", "BALOGUN", "OLADIPO", "AKINYEMI",
			"OYELARAN", "ADEWUMI", "OGUNDIPE", "FASHOLA", "ADEKUNLE", "ADESANYA", "OLATUNJI", "ODUYA", "AJAYI",
			"ALABI", "OYEBANJI", "OSHODI", "BAMIDELE"},
	},
	{ // Igbo
		firstNames: []string{"CHINEDU", "NGOZI", "EMEKA", "CHIAMAKA", "OBINNA", "ADAEZE", "IKECHUKWU", "CHIOMA",
			"UCHENNA", "NNAMDI", "AMARACHI", "CHUKWUEMEKA", "IFEANYI", "EBUKA", "NKECHI", "CHIDINMA", "KELECHI",
			"OBIAGELI", "TOCHUKWU", "ONYINYECHI", "SOMTOCHUKWU", "CHIBUZOR"},
		surnames: []string{"OKAFOR", "OKONKWO", "EZE", "NWANKWO", "OKEKE", "ANYANWU", "IWU", "OBI", "NWOSU",
			"EZEANI", "NDUKWE", "UZOMA", "AGU", "ONYEKACHI", "OKORIE", "CHUKWU", "NWACHUKWU", "IHEANACHO",
			"OKOYE", "UDEH"},
	},
	{ // Hausa-Fulani
		firstNames: []string{"ABUBAKAR", "AMINU", "HAUWA", "IBRAHIM", "ZAINAB", "MUSA", "FATIMA", "SANI", "AISHA",
			"YUSUF", "HADIZA", "UMAR", "BILKISU", "NASIR", "SADIQ", "MARYAM", "SULEIMAN", "HALIMA", "KABIR",
			"RAHMA", "ABDULLAHI", "ZAHRA"},
		surnames: []string{"BELLO", "ABDULLAHI", "MOHAMMED", "USMAN", "ALIYU", "YAKUBU", "SHEHU", "DANJUMA",
			"GARBA", "LAWAL", "IDRIS", "MAITAMA", "SULE", "BALARABE", "JIBRIN", "TANKO", "BUHARI", "DANTATA",
			"DANLADI", "SAMBO"},
	},
	{ // South-South and Middle Belt
		firstNames: []string{"EFE", "OGHENEKARO", "ESOSA", "IMUETINYAN", "TAMUNO", "EKANEM", "ENO", "UDEME",
			"NSIKAK", "TERHEMBA", "DOOSHIMA", "OCHE", "INIOBONG", "EBIERE", "TONYE", "OSARETIN", "AKPEVWE",
			"BLESSING", "GRACE", "DANIEL", "JOSEPH", "VICTORIA"},
		surnames: []string{"OGBEIDE", "IGHODARO", "OMORUYI", "EDET", "BASSEY", "ETIM", "AKPAN", "AONDOAKAA",
			"IORTYOM", "AGBO", "OKPARA", "OGHENE", "TAMUNO-WARI", "DAGOGO", "BRIGGS", "EKPO", "ITA", "ODIBO",
			"ERHABOR", "UMUKORO"},
	},
}
